import type { Db } from "@thaw/db";
import { z } from "zod";
import {
  emptyIdleTracker,
  HISTOGRAM_BINS,
  observeCapacity,
  type IdleTracker,
} from "../scheduling/index.ts";

// The warm pool's memory of an endpoint (EndpointWarmPool): its idle-time histogram and since
// when capacity has been spare. Reconcile notes each scale-down and scale-up in it, in the
// same transaction that drains or creates replicas, so no change is missed.

const StoredHistogram = z.object({
  bins: z.array(z.number().int().min(0)).length(HISTOGRAM_BINS),
  outOfBounds: z.number().int().min(0),
});

export interface WarmPoolMemory {
  tracker: IdleTracker;
  bestNonWarmSeconds: number | null;
}

export async function loadWarmPoolMemory(db: Db, endpointId: string): Promise<WarmPoolMemory> {
  const row = await db.endpointWarmPool.findUnique({ where: { endpointId } });
  if (!row) return { tracker: emptyIdleTracker(), bestNonWarmSeconds: null };
  const histogram = StoredHistogram.safeParse(row.histogram);
  return {
    tracker: {
      // A histogram stored under other bin settings is dropped, not misread.
      histogram: histogram.success ? histogram.data : emptyIdleTracker().histogram,
      idleSinceMs: row.idleSince?.getTime() ?? null,
    },
    bestNonWarmSeconds: row.bestNonWarmSeconds,
  };
}

export async function saveWarmPoolMemory(
  db: Db,
  endpoint: { id: string; orgId: string },
  memory: { tracker: IdleTracker; bestNonWarmSeconds?: number },
): Promise<void> {
  const data = {
    histogram: memory.tracker.histogram as unknown as object,
    idleSince: memory.tracker.idleSinceMs === null ? null : new Date(memory.tracker.idleSinceMs),
    ...(memory.bestNonWarmSeconds !== undefined
      ? { bestNonWarmSeconds: memory.bestNonWarmSeconds }
      : {}),
  };
  await db.endpointWarmPool.upsert({
    where: { endpointId: endpoint.id },
    create: { endpointId: endpoint.id, orgId: endpoint.orgId, ...data },
    update: data,
  });
}

/**
 * Reconcile's note: capacity went spare (a scale-down) or was needed again (a scale-up).
 * Called inside reconcile's transaction, under the endpoint's row lock.
 */
export async function noteCapacityChange(
  db: Db,
  endpoint: { id: string; orgId: string },
  change: "surplus" | "needed",
  now: Date,
): Promise<void> {
  const memory = await loadWarmPoolMemory(db, endpoint.id);
  const tracker = observeCapacity(memory.tracker, change, now.getTime());
  if (tracker === memory.tracker) return;
  await saveWarmPoolMemory(db, endpoint, { tracker });
}
