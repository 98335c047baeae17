-- AlterTable
ALTER TABLE "Org" ADD COLUMN     "maxApiKeys" INTEGER,
ADD COLUMN     "maxEndpoints" INTEGER,
ADD COLUMN     "maxGpus" INTEGER,
ADD COLUMN     "maxReplicasPerEndpoint" INTEGER;

-- CreateIndex
CREATE INDEX "Replica_state_updatedAt_idx" ON "Replica"("state", "updatedAt");

-- CreateIndex
CREATE INDEX "ScaleEvent_createdAt_idx" ON "ScaleEvent"("createdAt");
