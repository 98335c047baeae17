-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "OrgRole" AS ENUM ('owner', 'admin', 'member', 'viewer');

-- CreateEnum
CREATE TYPE "StartPath" AS ENUM ('warm', 'restore', 'lazy', 'pull');

-- CreateEnum
CREATE TYPE "Phase" AS ENUM ('queue', 'provision', 'handover', 'fetch_snapshot', 'restore', 'pull', 'prefetch', 'create', 'start', 'load_weights', 'compile', 'graph_capture', 'warmup', 'ready');

-- CreateEnum
CREATE TYPE "Objective" AS ENUM ('mean', 'p90');

-- CreateEnum
CREATE TYPE "DeploymentStatus" AS ENUM ('pending', 'active', 'superseded', 'failed');

-- CreateEnum
CREATE TYPE "NodeProvider" AS ENUM ('aws', 'sim');

-- CreateEnum
CREATE TYPE "NodeRuntime" AS ENUM ('containerd', 'sim');

-- CreateEnum
CREATE TYPE "NodeState" AS ENUM ('requested', 'booting', 'ready', 'draining', 'lost', 'terminated');

-- CreateEnum
CREATE TYPE "ReplicaState" AS ENUM ('pending', 'placed', 'starting', 'ready', 'warm', 'draining', 'stopped', 'failed');

-- CreateEnum
CREATE TYPE "ColdStartStatus" AS ENUM ('scheduled', 'dispatched', 'running', 'succeeded', 'failed', 'cancelled');

-- CreateEnum
CREATE TYPE "ColdStartTrigger" AS ENUM ('scale_up', 'scale_from_zero', 'replacement', 'prewarm');

-- CreateEnum
CREATE TYPE "SnapshotStatus" AS ENUM ('capturing', 'ready', 'quarantined', 'deleted');

-- CreateEnum
CREATE TYPE "SnapshotLocation" AS ENUM ('node', 'store');

-- CreateEnum
CREATE TYPE "ScaleSource" AS ENUM ('dashboard', 'api', 'signal', 'scale_from_zero', 'idle', 'system');

-- CreateEnum
CREATE TYPE "ActorType" AS ENUM ('user', 'api_key', 'node', 'system');

-- CreateEnum
CREATE TYPE "HistoryScope" AS ENUM ('deployment', 'endpoint', 'fleet');

-- CreateTable
CREATE TABLE "user" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "emailVerified" BOOLEAN NOT NULL DEFAULT false,
    "image" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "user_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "session" (
    "id" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "token" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "ipAddress" TEXT,
    "userAgent" TEXT,
    "userId" TEXT NOT NULL,

    CONSTRAINT "session_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "account" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "providerId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "accessToken" TEXT,
    "refreshToken" TEXT,
    "idToken" TEXT,
    "accessTokenExpiresAt" TIMESTAMP(3),
    "refreshTokenExpiresAt" TIMESTAMP(3),
    "scope" TEXT,
    "password" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "account_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "verification" (
    "id" TEXT NOT NULL,
    "identifier" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "verification_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Org" (
    "id" UUID NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "spendCapUsdPerHour" DOUBLE PRECISION,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Org_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Membership" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "userId" TEXT NOT NULL,
    "role" "OrgRole" NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Membership_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiKey" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "scopes" TEXT[],
    "expiresAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),
    "lastUsedAt" TIMESTAMP(3),
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ApiKey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Endpoint" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "gpuType" TEXT NOT NULL,
    "gpuCount" INTEGER NOT NULL DEFAULT 1,
    "minReplicas" INTEGER NOT NULL DEFAULT 0,
    "maxReplicas" INTEGER NOT NULL DEFAULT 1,
    "desiredReplicas" INTEGER NOT NULL DEFAULT 0,
    "scaleToZeroIdleSeconds" INTEGER NOT NULL DEFAULT 300,
    "allowedPaths" "StartPath"[] DEFAULT ARRAY['warm', 'restore', 'lazy', 'pull']::"StartPath"[],
    "objective" "Objective" NOT NULL DEFAULT 'mean',
    "activeDeploymentId" UUID,
    "version" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "deletedAt" TIMESTAMP(3),

    CONSTRAINT "Endpoint_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Deployment" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "endpointId" UUID NOT NULL,
    "version" INTEGER NOT NULL,
    "imageRef" TEXT NOT NULL,
    "imageDigest" TEXT NOT NULL,
    "imageBytes" BIGINT NOT NULL,
    "imageLayers" JSONB NOT NULL DEFAULT '[]',
    "estargzImageRef" TEXT,
    "estargzDigest" TEXT,
    "modelSource" TEXT NOT NULL,
    "modelBytes" BIGINT NOT NULL,
    "modelFormat" TEXT NOT NULL,
    "engine" TEXT NOT NULL,
    "engineArgs" JSONB NOT NULL DEFAULT '[]',
    "engineProfile" JSONB NOT NULL DEFAULT '{}',
    "status" "DeploymentStatus" NOT NULL DEFAULT 'pending',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Deployment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Node" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "provider" "NodeProvider" NOT NULL,
    "runtime" "NodeRuntime" NOT NULL,
    "instanceId" TEXT,
    "instanceType" TEXT NOT NULL,
    "zone" TEXT,
    "gpuModel" TEXT NOT NULL,
    "gpuCount" INTEGER NOT NULL,
    "gpuMemoryGiB" INTEGER NOT NULL DEFAULT 0,
    "vcpus" INTEGER NOT NULL,
    "networkGbps" DOUBLE PRECISION NOT NULL,
    "diskReadMiBps" DOUBLE PRECISION NOT NULL,
    "diskWriteMiBps" DOUBLE PRECISION NOT NULL,
    "pcieGBps" DOUBLE PRECISION NOT NULL,
    "registryRttMs" DOUBLE PRECISION NOT NULL DEFAULT 3,
    "driverVersion" TEXT,
    "cudaVersion" TEXT,
    "hourlyPriceUsd" DOUBLE PRECISION,
    "state" "NodeState" NOT NULL DEFAULT 'requested',
    "stateReason" TEXT,
    "lastHeartbeatAt" TIMESTAMP(3),
    "credentialHash" TEXT,
    "agentVersion" TEXT,
    "agentUrl" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Node_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "GpuReservation" (
    "id" UUID NOT NULL,
    "nodeId" UUID NOT NULL,
    "gpuIndex" INTEGER NOT NULL,
    "replicaId" UUID NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "GpuReservation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "NodeImage" (
    "id" UUID NOT NULL,
    "nodeId" UUID NOT NULL,
    "digest" TEXT NOT NULL,
    "bytes" BIGINT NOT NULL,
    "estargz" BOOLEAN NOT NULL DEFAULT false,
    "lastUsedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "NodeImage_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "NodeSnapshot" (
    "id" UUID NOT NULL,
    "nodeId" UUID NOT NULL,
    "snapshotId" UUID NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "NodeSnapshot_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Replica" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "endpointId" UUID NOT NULL,
    "deploymentId" UUID NOT NULL,
    "nodeId" UUID,
    "state" "ReplicaState" NOT NULL DEFAULT 'pending',
    "stateVersion" INTEGER NOT NULL DEFAULT 0,
    "pendingReason" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "readyAt" TIMESTAMP(3),
    "lastActiveAt" TIMESTAMP(3),
    "stoppedAt" TIMESTAMP(3),

    CONSTRAINT "Replica_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ColdStart" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "endpointId" UUID NOT NULL,
    "deploymentId" UUID NOT NULL,
    "replicaId" UUID NOT NULL,
    "nodeId" UUID,
    "attempt" INTEGER NOT NULL DEFAULT 1,
    "trigger" "ColdStartTrigger" NOT NULL DEFAULT 'scale_up',
    "path" "StartPath" NOT NULL,
    "locality" TEXT NOT NULL,
    "predictedSeconds" DOUBLE PRECISION NOT NULL,
    "options" JSONB NOT NULL DEFAULT '[]',
    "explanation" TEXT NOT NULL DEFAULT '',
    "explored" BOOLEAN NOT NULL DEFAULT false,
    "status" "ColdStartStatus" NOT NULL DEFAULT 'scheduled',
    "error" TEXT,
    "failedPhase" "Phase",
    "requestedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dispatchedAt" TIMESTAMP(3),
    "readyAt" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),
    "actualSeconds" DOUBLE PRECISION,
    "lastSequence" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "ColdStart_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PhaseEvent" (
    "id" UUID NOT NULL,
    "coldStartId" UUID NOT NULL,
    "sequence" INTEGER NOT NULL,
    "phase" "Phase" NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "endedAt" TIMESTAMP(3),
    "seconds" DOUBLE PRECISION,
    "bytes" BIGINT,
    "throughputBps" DOUBLE PRECISION,
    "attributes" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PhaseEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Snapshot" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "deploymentId" UUID NOT NULL,
    "gpuModel" TEXT NOT NULL,
    "driverVersion" TEXT NOT NULL,
    "cudaVersion" TEXT NOT NULL,
    "location" "SnapshotLocation" NOT NULL,
    "uri" TEXT NOT NULL,
    "bytes" BIGINT NOT NULL,
    "sleepLevel" INTEGER NOT NULL DEFAULT 2,
    "status" "SnapshotStatus" NOT NULL DEFAULT 'capturing',
    "consecutiveFailures" INTEGER NOT NULL DEFAULT 0,
    "lastRestoredAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Snapshot_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScaleEvent" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "endpointId" UUID NOT NULL,
    "source" "ScaleSource" NOT NULL,
    "previousDesired" INTEGER NOT NULL,
    "desired" INTEGER NOT NULL,
    "reason" TEXT NOT NULL DEFAULT '',
    "actorType" "ActorType" NOT NULL,
    "actorId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ScaleEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "HistoryStat" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "scope" "HistoryScope" NOT NULL,
    "scopeKey" TEXT NOT NULL,
    "path" "StartPath" NOT NULL,
    "locality" TEXT NOT NULL,
    "samples" INTEGER NOT NULL DEFAULT 0,
    "meanLog" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "m2Log" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "lastSeconds" DOUBLE PRECISION,
    "predictionErrorLog" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "HistoryStat_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AuditLog" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "actorType" "ActorType" NOT NULL,
    "actorId" TEXT,
    "action" TEXT NOT NULL,
    "targetType" TEXT NOT NULL,
    "targetId" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AuditLog_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "JoinToken" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "prefix" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "usedAt" TIMESTAMP(3),
    "nodeId" UUID,
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "JoinToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "IdempotencyRecord" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "requestHash" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "response" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "IdempotencyRecord_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ServiceHeartbeat" (
    "id" TEXT NOT NULL,
    "service" TEXT NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "lastSeenAt" TIMESTAMP(3) NOT NULL,
    "details" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "ServiceHeartbeat_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "user_email_key" ON "user"("email");

-- CreateIndex
CREATE UNIQUE INDEX "session_token_key" ON "session"("token");

-- CreateIndex
CREATE INDEX "session_userId_idx" ON "session"("userId");

-- CreateIndex
CREATE INDEX "account_userId_idx" ON "account"("userId");

-- CreateIndex
CREATE INDEX "verification_identifier_idx" ON "verification"("identifier");

-- CreateIndex
CREATE UNIQUE INDEX "Org_slug_key" ON "Org"("slug");

-- CreateIndex
CREATE INDEX "Membership_userId_idx" ON "Membership"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "Membership_orgId_userId_key" ON "Membership"("orgId", "userId");

-- CreateIndex
CREATE UNIQUE INDEX "ApiKey_prefix_key" ON "ApiKey"("prefix");

-- CreateIndex
CREATE UNIQUE INDEX "ApiKey_hash_key" ON "ApiKey"("hash");

-- CreateIndex
CREATE INDEX "ApiKey_orgId_createdAt_idx" ON "ApiKey"("orgId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Endpoint_activeDeploymentId_key" ON "Endpoint"("activeDeploymentId");

-- CreateIndex
CREATE INDEX "Endpoint_orgId_createdAt_idx" ON "Endpoint"("orgId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Endpoint_orgId_slug_key" ON "Endpoint"("orgId", "slug");

-- CreateIndex
CREATE INDEX "Deployment_orgId_idx" ON "Deployment"("orgId");

-- CreateIndex
CREATE UNIQUE INDEX "Deployment_endpointId_version_key" ON "Deployment"("endpointId", "version");

-- CreateIndex
CREATE UNIQUE INDEX "Node_credentialHash_key" ON "Node"("credentialHash");

-- CreateIndex
CREATE INDEX "Node_orgId_state_idx" ON "Node"("orgId", "state");

-- CreateIndex
CREATE INDEX "Node_state_lastHeartbeatAt_idx" ON "Node"("state", "lastHeartbeatAt");

-- CreateIndex
CREATE UNIQUE INDEX "Node_provider_instanceId_key" ON "Node"("provider", "instanceId");

-- CreateIndex
CREATE INDEX "GpuReservation_replicaId_idx" ON "GpuReservation"("replicaId");

-- CreateIndex
CREATE UNIQUE INDEX "GpuReservation_nodeId_gpuIndex_key" ON "GpuReservation"("nodeId", "gpuIndex");

-- CreateIndex
CREATE UNIQUE INDEX "NodeImage_nodeId_digest_key" ON "NodeImage"("nodeId", "digest");

-- CreateIndex
CREATE UNIQUE INDEX "NodeSnapshot_nodeId_snapshotId_key" ON "NodeSnapshot"("nodeId", "snapshotId");

-- CreateIndex
CREATE INDEX "Replica_endpointId_state_idx" ON "Replica"("endpointId", "state");

-- CreateIndex
CREATE INDEX "Replica_nodeId_state_idx" ON "Replica"("nodeId", "state");

-- CreateIndex
CREATE INDEX "Replica_orgId_state_idx" ON "Replica"("orgId", "state");

-- CreateIndex
CREATE INDEX "ColdStart_orgId_requestedAt_idx" ON "ColdStart"("orgId", "requestedAt");

-- CreateIndex
CREATE INDEX "ColdStart_endpointId_requestedAt_idx" ON "ColdStart"("endpointId", "requestedAt");

-- CreateIndex
CREATE INDEX "ColdStart_deploymentId_requestedAt_idx" ON "ColdStart"("deploymentId", "requestedAt");

-- CreateIndex
CREATE INDEX "ColdStart_nodeId_status_idx" ON "ColdStart"("nodeId", "status");

-- CreateIndex
CREATE UNIQUE INDEX "ColdStart_replicaId_attempt_key" ON "ColdStart"("replicaId", "attempt");

-- CreateIndex
CREATE INDEX "PhaseEvent_coldStartId_phase_idx" ON "PhaseEvent"("coldStartId", "phase");

-- CreateIndex
CREATE UNIQUE INDEX "PhaseEvent_coldStartId_sequence_key" ON "PhaseEvent"("coldStartId", "sequence");

-- CreateIndex
CREATE INDEX "Snapshot_deploymentId_status_idx" ON "Snapshot"("deploymentId", "status");

-- CreateIndex
CREATE INDEX "Snapshot_orgId_idx" ON "Snapshot"("orgId");

-- CreateIndex
CREATE INDEX "ScaleEvent_endpointId_createdAt_idx" ON "ScaleEvent"("endpointId", "createdAt");

-- CreateIndex
CREATE INDEX "ScaleEvent_orgId_createdAt_idx" ON "ScaleEvent"("orgId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "HistoryStat_orgId_scope_scopeKey_path_locality_key" ON "HistoryStat"("orgId", "scope", "scopeKey", "path", "locality");

-- CreateIndex
CREATE INDEX "AuditLog_orgId_createdAt_idx" ON "AuditLog"("orgId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "JoinToken_prefix_key" ON "JoinToken"("prefix");

-- CreateIndex
CREATE UNIQUE INDEX "JoinToken_tokenHash_key" ON "JoinToken"("tokenHash");

-- CreateIndex
CREATE INDEX "JoinToken_orgId_createdAt_idx" ON "JoinToken"("orgId", "createdAt");

-- CreateIndex
CREATE INDEX "IdempotencyRecord_createdAt_idx" ON "IdempotencyRecord"("createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "IdempotencyRecord_orgId_key_key" ON "IdempotencyRecord"("orgId", "key");

-- CreateIndex
CREATE INDEX "ServiceHeartbeat_service_lastSeenAt_idx" ON "ServiceHeartbeat"("service", "lastSeenAt");

-- AddForeignKey
ALTER TABLE "session" ADD CONSTRAINT "session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "account" ADD CONSTRAINT "account_userId_fkey" FOREIGN KEY ("userId") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Membership" ADD CONSTRAINT "Membership_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Org"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Membership" ADD CONSTRAINT "Membership_userId_fkey" FOREIGN KEY ("userId") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Org"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Endpoint" ADD CONSTRAINT "Endpoint_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Org"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Endpoint" ADD CONSTRAINT "Endpoint_activeDeploymentId_fkey" FOREIGN KEY ("activeDeploymentId") REFERENCES "Deployment"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Deployment" ADD CONSTRAINT "Deployment_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "Endpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Node" ADD CONSTRAINT "Node_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Org"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GpuReservation" ADD CONSTRAINT "GpuReservation_nodeId_fkey" FOREIGN KEY ("nodeId") REFERENCES "Node"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GpuReservation" ADD CONSTRAINT "GpuReservation_replicaId_fkey" FOREIGN KEY ("replicaId") REFERENCES "Replica"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "NodeImage" ADD CONSTRAINT "NodeImage_nodeId_fkey" FOREIGN KEY ("nodeId") REFERENCES "Node"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "NodeSnapshot" ADD CONSTRAINT "NodeSnapshot_nodeId_fkey" FOREIGN KEY ("nodeId") REFERENCES "Node"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "NodeSnapshot" ADD CONSTRAINT "NodeSnapshot_snapshotId_fkey" FOREIGN KEY ("snapshotId") REFERENCES "Snapshot"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Replica" ADD CONSTRAINT "Replica_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "Endpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Replica" ADD CONSTRAINT "Replica_deploymentId_fkey" FOREIGN KEY ("deploymentId") REFERENCES "Deployment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Replica" ADD CONSTRAINT "Replica_nodeId_fkey" FOREIGN KEY ("nodeId") REFERENCES "Node"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ColdStart" ADD CONSTRAINT "ColdStart_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "Endpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ColdStart" ADD CONSTRAINT "ColdStart_deploymentId_fkey" FOREIGN KEY ("deploymentId") REFERENCES "Deployment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ColdStart" ADD CONSTRAINT "ColdStart_replicaId_fkey" FOREIGN KEY ("replicaId") REFERENCES "Replica"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ColdStart" ADD CONSTRAINT "ColdStart_nodeId_fkey" FOREIGN KEY ("nodeId") REFERENCES "Node"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PhaseEvent" ADD CONSTRAINT "PhaseEvent_coldStartId_fkey" FOREIGN KEY ("coldStartId") REFERENCES "ColdStart"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Snapshot" ADD CONSTRAINT "Snapshot_deploymentId_fkey" FOREIGN KEY ("deploymentId") REFERENCES "Deployment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScaleEvent" ADD CONSTRAINT "ScaleEvent_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "Endpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AuditLog" ADD CONSTRAINT "AuditLog_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Org"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "JoinToken" ADD CONSTRAINT "JoinToken_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Org"("id") ON DELETE CASCADE ON UPDATE CASCADE;

