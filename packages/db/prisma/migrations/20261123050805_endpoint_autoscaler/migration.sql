-- AlterTable
ALTER TABLE "Endpoint" ADD COLUMN     "autoscalerState" JSONB,
ADD COLUMN     "targetConcurrency" INTEGER NOT NULL DEFAULT 8;

