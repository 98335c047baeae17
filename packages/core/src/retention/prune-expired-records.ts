import { Prisma, type DbClient } from "@thaw/db";
import { retentionCutoffs, type RetentionPolicy } from "./retention-policy.ts";

/** Rows per DELETE: short transactions, no long lock on a busy table. */
const BATCH = 1_000;
/** Batches per kind per run: a backlog is worked off over a few runs, never in one long one. */
const MAX_BATCHES = 50;

export interface PrunedRecords {
  idempotencyRecords: number;
  scaleEvents: number;
  /** Replicas deleted; their cold starts and phases go with them. */
  replicas: number;
  /** GPU-time intervals (the cost ledger) that ended before the retention. */
  gpuTime: number;
  /** Webhook deliveries settled (succeeded or failed) before it, with their attempts. */
  webhookDeliveries: number;
  /** Per-minute load samples (the what-if's input) of minutes before it. */
  loadSamples: number;
}

/**
 * Deletes what the retention policy no longer keeps, in small batches. Several schedulers may
 * run it at once: rows one has locked are skipped by the other. A replica goes only when it
 * has been stopped or failed for the whole retention and every start of it has been taken
 * into account by history (its statistics outlive it).
 */
export async function pruneExpiredRecords({
  db,
  policy,
  now = new Date(),
}: {
  db: DbClient;
  policy: RetentionPolicy;
  now?: Date;
}): Promise<PrunedRecords> {
  const cutoff = retentionCutoffs(now, policy);
  const drain = async (batch: () => Promise<number>) => {
    let total = 0;
    for (let i = 0; i < MAX_BATCHES; i++) {
      const deleted = await batch();
      total += deleted;
      if (deleted < BATCH) break;
    }
    return total;
  };
  const idempotencyRecords = await drain(() =>
    db.$executeRaw(Prisma.sql`
      DELETE FROM "IdempotencyRecord" WHERE id IN (
        SELECT id FROM "IdempotencyRecord" WHERE "createdAt" < ${cutoff.idempotencyRecordsBefore}
        LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)`),
  );
  const scaleEvents = await drain(() =>
    db.$executeRaw(Prisma.sql`
      DELETE FROM "ScaleEvent" WHERE id IN (
        SELECT id FROM "ScaleEvent" WHERE "createdAt" < ${cutoff.scaleEventsBefore}
        LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)`),
  );
  const replicas = await drain(() =>
    db.$executeRaw(Prisma.sql`
      DELETE FROM "Replica" WHERE id IN (
        SELECT r.id FROM "Replica" r
        WHERE r.state IN ('stopped', 'failed') AND r."updatedAt" < ${cutoff.replicasStoppedBefore}
          AND NOT EXISTS (
            SELECT 1 FROM "ColdStart" c WHERE c."replicaId" = r.id AND c."closedHandledAt" IS NULL)
        LIMIT ${BATCH} FOR UPDATE OF r SKIP LOCKED)`),
  );
  const gpuTime = await drain(() =>
    db.$executeRaw(Prisma.sql`
      DELETE FROM "GpuTime" WHERE id IN (
        SELECT id FROM "GpuTime" WHERE "endedAt" < ${cutoff.recordsBefore}
        LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)`),
  );
  // A pending delivery stays whatever its age: it is still being tried (or redelivered).
  const webhookDeliveries = await drain(() =>
    db.$executeRaw(Prisma.sql`
      DELETE FROM "WebhookDelivery" WHERE id IN (
        SELECT id FROM "WebhookDelivery"
        WHERE "createdAt" < ${cutoff.recordsBefore} AND status <> 'pending'
        LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)`),
  );
  const loadSamples = await drain(() =>
    db.$executeRaw(Prisma.sql`
      DELETE FROM "LoadSample" WHERE ("endpointId", minute) IN (
        SELECT "endpointId", minute FROM "LoadSample" WHERE minute < ${cutoff.recordsBefore}
        LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)`),
  );
  return { idempotencyRecords, scaleEvents, replicas, gpuTime, webhookDeliveries, loadSamples };
}
