-- AlterTable
ALTER TABLE "Node" ADD COLUMN     "provisioned" BOOLEAN NOT NULL DEFAULT false;

