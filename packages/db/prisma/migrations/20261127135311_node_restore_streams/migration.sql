-- AlterTable
ALTER TABLE "Node" ADD COLUMN     "restoreStreams" INTEGER;

