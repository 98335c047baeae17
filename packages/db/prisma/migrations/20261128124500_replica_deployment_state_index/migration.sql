-- CreateIndex
CREATE INDEX "Replica_deploymentId_state_idx" ON "Replica"("deploymentId", "state");
