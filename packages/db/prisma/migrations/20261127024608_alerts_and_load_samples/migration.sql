-- CreateEnum
CREATE TYPE "WebhookFormat" AS ENUM ('standard', 'slack');

-- CreateEnum
CREATE TYPE "AlertRuleKind" AS ENUM ('slow_cold_start', 'time_to_ready_slo');

-- AlterTable
ALTER TABLE "WebhookSubscription" ADD COLUMN     "format" "WebhookFormat" NOT NULL DEFAULT 'standard';

-- CreateTable
CREATE TABLE "AlertRule" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "endpointId" UUID,
    "kind" "AlertRuleKind" NOT NULL,
    "name" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "thresholdSeconds" DOUBLE PRECISION,
    "objective" DOUBLE PRECISION,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "AlertRule_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AlertEpisode" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "ruleId" UUID NOT NULL,
    "endpointId" UUID NOT NULL,
    "openKey" TEXT,
    "severity" TEXT NOT NULL,
    "details" JSONB NOT NULL,
    "openedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolvedAt" TIMESTAMP(3),

    CONSTRAINT "AlertEpisode_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "LoadSample" (
    "orgId" UUID NOT NULL,
    "endpointId" UUID NOT NULL,
    "minute" TIMESTAMP(3) NOT NULL,
    "maxConcurrency" INTEGER NOT NULL,
    "sumConcurrency" DOUBLE PRECISION NOT NULL,
    "signals" INTEGER NOT NULL,

    CONSTRAINT "LoadSample_pkey" PRIMARY KEY ("endpointId","minute")
);

-- CreateIndex
CREATE INDEX "AlertRule_orgId_createdAt_idx" ON "AlertRule"("orgId", "createdAt");

-- CreateIndex
CREATE INDEX "AlertRule_endpointId_idx" ON "AlertRule"("endpointId");

-- CreateIndex
CREATE UNIQUE INDEX "AlertEpisode_openKey_key" ON "AlertEpisode"("openKey");

-- CreateIndex
CREATE INDEX "AlertEpisode_orgId_openedAt_idx" ON "AlertEpisode"("orgId", "openedAt");

-- CreateIndex
CREATE INDEX "AlertEpisode_ruleId_openedAt_idx" ON "AlertEpisode"("ruleId", "openedAt");

-- CreateIndex
CREATE INDEX "LoadSample_orgId_minute_idx" ON "LoadSample"("orgId", "minute");

-- CreateIndex
CREATE INDEX "LoadSample_minute_idx" ON "LoadSample"("minute");

-- AddForeignKey
ALTER TABLE "AlertRule" ADD CONSTRAINT "AlertRule_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Org"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AlertRule" ADD CONSTRAINT "AlertRule_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "Endpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AlertEpisode" ADD CONSTRAINT "AlertEpisode_ruleId_fkey" FOREIGN KEY ("ruleId") REFERENCES "AlertRule"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "LoadSample" ADD CONSTRAINT "LoadSample_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "Endpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

