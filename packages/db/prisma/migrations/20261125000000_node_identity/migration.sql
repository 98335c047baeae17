-- Node identity: random per-node credentials with rotation and revocation, and the agent's
-- TLS certificate pinned at join.
ALTER TABLE "Node" ADD COLUMN "pendingCredentialHash" TEXT;
ALTER TABLE "Node" ADD COLUMN "credentialRotationRequestedAt" TIMESTAMP(3);
ALTER TABLE "Node" ADD COLUMN "credentialRevokedAt" TIMESTAMP(3);
ALTER TABLE "Node" ADD COLUMN "agentCertSha256" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "Node_pendingCredentialHash_key" ON "Node"("pendingCredentialHash");
