-- AlterTable
ALTER TABLE "Node" ADD COLUMN     "gpuMemoryService" BOOLEAN NOT NULL DEFAULT false;

