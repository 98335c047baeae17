-- AlterTable
ALTER TABLE "Node" ADD COLUMN     "sampleRank" DOUBLE PRECISION NOT NULL DEFAULT random();

-- CreateIndex
CREATE INDEX "Node_orgId_gpuModel_state_sampleRank_idx" ON "Node"("orgId", "gpuModel", "state", "sampleRank");

-- CreateIndex
CREATE INDEX "NodeImage_digest_idx" ON "NodeImage"("digest");

-- CreateIndex
CREATE INDEX "NodeSnapshot_snapshotId_idx" ON "NodeSnapshot"("snapshotId");

-- CreateIndex
CREATE INDEX "ColdStart_orgId_explored_requestedAt_idx" ON "ColdStart"("orgId", "explored", "requestedAt");

