-- CreateEnum
CREATE TYPE "GpuTimeCategory" AS ENUM ('serving', 'starting', 'warm_idle', 'failed', 'stopping');

-- AlterTable
ALTER TABLE "Replica" ADD COLUMN     "stateSince" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- CreateTable
CREATE TABLE "GpuTime" (
    "id" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "endpointId" UUID NOT NULL,
    "deploymentId" UUID NOT NULL,
    "replicaId" UUID NOT NULL,
    "nodeId" UUID,
    "category" "GpuTimeCategory" NOT NULL,
    "path" "StartPath",
    "gpus" INTEGER NOT NULL,
    "usdPerGpuHour" DOUBLE PRECISION,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "endedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "GpuTime_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "GpuTime_orgId_endedAt_idx" ON "GpuTime"("orgId", "endedAt");

-- CreateIndex
CREATE INDEX "GpuTime_endpointId_endedAt_idx" ON "GpuTime"("endpointId", "endedAt");

-- CreateIndex
CREATE INDEX "GpuTime_endedAt_idx" ON "GpuTime"("endedAt");


-- The GPU-time ledger: when a replica leaves a state in which it held GPUs, the interval it
-- spent there is written to "GpuTime" — by the database, so no code path that moves a replica
-- can forget it. Every path that frees GPUs changes the state first and deletes the
-- reservations after (finishReplicaStop, returnReplicaToPending, giveUpReplica, a handover),
-- so the reservations counted here are the ones the interval held.
CREATE FUNCTION thaw_record_gpu_time() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  held integer;
  leaving_start boolean := OLD.state IN ('placed', 'starting');
  start_path "StartPath";
  price double precision;
BEGIN
  IF NEW.state IS NOT DISTINCT FROM OLD.state THEN
    RETURN NEW;
  END IF;
  NEW."stateSince" := statement_timestamp();
  IF OLD.state NOT IN ('placed', 'starting', 'ready', 'warm', 'draining') THEN
    RETURN NEW;
  END IF;
  SELECT count(*) INTO held FROM "GpuReservation" WHERE "replicaId" = OLD.id;
  IF held = 0 THEN
    RETURN NEW;
  END IF;
  IF leaving_start THEN
    SELECT c.path INTO start_path FROM "ColdStart" c
    WHERE c."replicaId" = OLD.id ORDER BY c.attempt DESC LIMIT 1;
  END IF;
  SELECT n."hourlyPriceUsd" / NULLIF(n."gpuCount", 0) INTO price FROM "Node" n WHERE n.id = OLD."nodeId";
  INSERT INTO "GpuTime" (id, "orgId", "endpointId", "deploymentId", "replicaId", "nodeId",
    category, path, gpus, "usdPerGpuHour", "startedAt", "endedAt")
  VALUES (gen_random_uuid(), OLD."orgId", OLD."endpointId", OLD."deploymentId", OLD.id, OLD."nodeId",
    (CASE
      WHEN leaving_start AND NEW.state IN ('pending', 'failed') THEN 'failed'
      WHEN leaving_start THEN 'starting'
      WHEN OLD.state = 'ready' AND OLD.prewarm THEN 'warm_idle'
      WHEN OLD.state = 'ready' THEN 'serving'
      WHEN OLD.state = 'warm' THEN 'warm_idle'
      ELSE 'stopping'
    END)::"GpuTimeCategory",
    start_path, held, price, OLD."stateSince", statement_timestamp());
  RETURN NEW;
END
$$;

CREATE TRIGGER "Replica_gpu_time"
  BEFORE UPDATE OF state ON "Replica"
  FOR EACH ROW EXECUTE FUNCTION thaw_record_gpu_time();
