-- Database objects schema.prisma cannot express, as the migrations leave them (PostgreSQL
-- functions and triggers). The schema-drift test builds a database from schema.prisma plus
-- this file and compares it with the one the migrations build: change such an object with a
-- migration, and here.

-- From 20261127002753_gpu_time: the GPU-time ledger's trigger.
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
