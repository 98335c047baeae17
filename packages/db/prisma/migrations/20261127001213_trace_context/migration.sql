-- AlterTable
ALTER TABLE "Replica" ADD COLUMN     "scaleEventId" UUID;

-- AlterTable
ALTER TABLE "ScaleEvent" ADD COLUMN     "traceparent" TEXT;

