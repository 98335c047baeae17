-- AlterTable
ALTER TABLE "ColdStart" ADD COLUMN     "closedHandledAt" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "ColdStart_status_closedHandledAt_idx" ON "ColdStart"("status", "closedHandledAt");

