-- The kernel-cache store: a deployment's compiled-kernel caches per GPU model and driver,
-- claimed by the start that compiles them (capturing) and recorded when its agent reports the
-- pushed artifact's digest (ready).
CREATE TYPE "KernelCacheStatus" AS ENUM ('capturing', 'ready');

CREATE TABLE "KernelCache" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "deploymentId" UUID NOT NULL,
    "gpuModel" TEXT NOT NULL,
    "driverVersion" TEXT NOT NULL,
    "status" "KernelCacheStatus" NOT NULL DEFAULT 'capturing',
    "uri" TEXT NOT NULL,
    "digest" TEXT,
    "bytes" BIGINT NOT NULL DEFAULT 0,
    "coldStartId" UUID,
    "sourceNodeId" UUID,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "KernelCache_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "KernelCache_orgId_idx" ON "KernelCache"("orgId");
CREATE UNIQUE INDEX "KernelCache_deploymentId_gpuModel_driverVersion_key" ON "KernelCache"("deploymentId", "gpuModel", "driverVersion");

ALTER TABLE "KernelCache" ADD CONSTRAINT "KernelCache_deploymentId_fkey" FOREIGN KEY ("deploymentId") REFERENCES "Deployment"("id") ON DELETE CASCADE ON UPDATE CASCADE;
