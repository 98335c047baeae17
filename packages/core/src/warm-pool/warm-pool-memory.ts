import { Prisma, type Db, type SqlRows } from "@thaw/db";
import { z } from "zod";
import { TimedReads } from "./timed-reads.ts";
import {
  emptyIdleTimeHistogram,
  emptyIdleTracker,
  HISTOGRAM_BINS,
  observeCapacity,
  type IdleTimeHistogram,
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

/** An EndpointWarmPool row as stored (its histogram as JSON; its idleSince as read). */
export interface MemoryRow {
  histogram: unknown;
  idleSince: Date | string | null;
  bestNonWarmSeconds: number;
}

/** `rows`: reconcile's direct statements, or `prismaRows(tx)` in the warm-pool worker's. */
export async function loadWarmPoolMemory(
  rows: SqlRows,
  endpointId: string,
): Promise<WarmPoolMemory> {
  const [row] = await rows<MemoryRow>(Prisma.sql`
    SELECT histogram, "idleSince", "bestNonWarmSeconds" FROM "EndpointWarmPool"
    WHERE "endpointId" = ${endpointId}::uuid`);
  return warmPoolMemoryOf(row);
}

/**
 * The memory a stored row holds (none: an empty one). idleSince may come as JSON's text of a
 * `timestamp` column, which is UTC as Prisma writes it.
 */
export function warmPoolMemoryOf(row: MemoryRow | undefined): WarmPoolMemory {
  if (!row) return { tracker: emptyIdleTracker(), bestNonWarmSeconds: null };
  const histogram = StoredHistogram.safeParse(row.histogram);
  const idleSince =
    typeof row.idleSince === "string" ? new Date(`${row.idleSince}Z`) : row.idleSince;
  return {
    tracker: {
      // A histogram stored under other bin settings is dropped, not misread.
      histogram: histogram.success ? histogram.data : emptyIdleTracker().histogram,
      idleSinceMs: idleSince?.getTime() ?? null,
    },
    bestNonWarmSeconds: row.bestNonWarmSeconds,
  };
}

export async function saveWarmPoolMemory(
  rows: SqlRows,
  endpoint: { id: string; orgId: string },
  memory: { tracker: IdleTracker; bestNonWarmSeconds?: number },
): Promise<void> {
  const histogram = JSON.stringify(memory.tracker.histogram);
  const idleSince =
    memory.tracker.idleSinceMs === null ? null : new Date(memory.tracker.idleSinceMs);
  // Left as it is when not given (the column's default on a new row).
  const best = memory.bestNonWarmSeconds ?? null;
  await rows(Prisma.sql`
    INSERT INTO "EndpointWarmPool" ("endpointId", "orgId", histogram, "idleSince",
      "bestNonWarmSeconds", "updatedAt")
    VALUES (${endpoint.id}::uuid, ${endpoint.orgId}::uuid, ${histogram}::jsonb,
      ${idleSince}::timestamp, coalesce(${best}::float8, 60), ${new Date()}::timestamp)
    ON CONFLICT ("endpointId") DO UPDATE SET histogram = excluded.histogram,
      "idleSince" = excluded."idleSince",
      "bestNonWarmSeconds" = coalesce(${best}::float8, "EndpointWarmPool"."bestNonWarmSeconds"),
      "updatedAt" = excluded."updatedAt"
    RETURNING "endpointId"`);
}

/**
 * Reconcile's note: capacity went spare (a scale-down) or was needed again (a scale-up).
 * Called inside reconcile's transaction, under the endpoint's row lock.
 */
export async function noteCapacityChange(
  rows: SqlRows,
  endpoint: { id: string; orgId: string },
  change: "surplus" | "needed",
  now: Date,
  /** The memory as read under the same lock, when the caller has it already. */
  known?: WarmPoolMemory,
): Promise<void> {
  const memory = known ?? (await loadWarmPoolMemory(rows, endpoint.id));
  const tracker = observeCapacity(memory.tracker, change, now.getTime());
  if (tracker === memory.tracker) return;
  await saveWarmPoolMemory(rows, endpoint, { tracker });
}

/**
 * The idle times of the org's other endpoints, summed: the prior of an endpoint whose own
 * histogram is thin (a new endpoint starts from how its org's traffic pauses, as bench:replay's
 * warm pool does). Summed in Postgres, so the worker reads 241 numbers, not every endpoint's row;
 * only this org's rows, and histograms stored under other bin settings are left out.
 */
export async function loadOrgIdleTimes(
  db: Db,
  orgId: string,
  exceptEndpointId: string | null,
): Promise<IdleTimeHistogram | null> {
  // Postgres has no "every uuid but none": a nil uuid no endpoint has stands for none.
  const except = exceptEndpointId ?? "00000000-0000-0000-0000-000000000000";
  const rows = await db.$queryRaw<{ bin: number; count: number }[]>`
    SELECT (b.idx - 1)::int AS bin, sum((b.value)::numeric)::float8 AS count
    FROM "EndpointWarmPool" w,
         jsonb_array_elements_text(w.histogram::jsonb -> 'bins') WITH ORDINALITY AS b(value, idx)
    WHERE w."orgId" = ${orgId}::uuid AND w."endpointId" <> ${except}::uuid
      AND jsonb_array_length(w.histogram::jsonb -> 'bins') = ${HISTOGRAM_BINS}
    GROUP BY b.idx`;
  const [outOfBounds] = await db.$queryRaw<{ count: number | null }[]>`
    SELECT sum((w.histogram::jsonb ->> 'outOfBounds')::numeric)::float8 AS count
    FROM "EndpointWarmPool" w
    WHERE w."orgId" = ${orgId}::uuid AND w."endpointId" <> ${except}::uuid
      AND jsonb_array_length(w.histogram::jsonb -> 'bins') = ${HISTOGRAM_BINS}`;
  const pooled = emptyIdleTimeHistogram();
  for (const { bin, count } of rows) if (bin >= 0 && bin < HISTOGRAM_BINS) pooled.bins[bin] = count;
  pooled.outOfBounds = outOfBounds?.count ?? 0;
  const total = pooled.bins.reduce((a, b) => a + b, pooled.outOfBounds);
  return total > 0 ? pooled : null;
}

/**
 * loadOrgIdleTimes for a process that tends many endpoints of an org: the org's sum over all
 * its endpoints is read once per `ttlMs` and the tended endpoint's own histogram taken out
 * of it. Summing every endpoint's 241 bins for each endpoint tended was quadratic in the
 * org's endpoints — with 2,500 endpoints, the sweep's tendings alone kept Postgres's two
 * cores busy (bench:warm-handover). The prior is then up to `ttlMs` old and subtracts the
 * endpoint's histogram as it is now rather than as summed: a prior, pooled from thousands of
 * idle times, that moves slowly.
 */
export class OrgIdleTimesMemo {
  private readonly sums: TimedReads<IdleTimeHistogram>;

  constructor(ttlMs = 60_000, nowMs: () => number = () => Date.now()) {
    this.sums = new TimedReads(ttlMs, nowMs);
  }

  async load(db: Db, orgId: string, own: IdleTimeHistogram): Promise<IdleTimeHistogram | null> {
    const sum = await this.sums.get(
      orgId,
      async () => (await loadOrgIdleTimes(db, orgId, null)) ?? emptyIdleTimeHistogram(),
    );
    const others = emptyIdleTimeHistogram();
    const mine = own.bins.length === HISTOGRAM_BINS ? own : emptyIdleTimeHistogram();
    for (let i = 0; i < HISTOGRAM_BINS; i++)
      others.bins[i] = Math.max(0, sum.bins[i]! - mine.bins[i]!);
    others.outOfBounds = Math.max(0, sum.outOfBounds - mine.outOfBounds);
    const total = others.bins.reduce((a, b) => a + b, others.outOfBounds);
    return total > 0 ? others : null;
  }
}
