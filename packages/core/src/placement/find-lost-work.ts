import type { DbClient } from "@thaw/db";

// The periodic sweep's reading of Postgres (ARCHITECTURE.md §3: "anything lost in Redis is
// repaired from Postgres"): every endpoint to reconcile — which re-enqueues its pending
// placements, lost dispatches and drains — and every closed start not yet taken into account.

/** A closed start is given this long for its own job before the sweep takes it. */
export const CLOSED_GRACE_MS = 10_000;

/**
 * Endpoints per sweep period: the sweep walks the endpoints in id order, this many per
 * RECONCILE_SWEEP_MS, and starts again from the first. Its cost is bounded whatever the
 * fleet: a sweep of every endpoint every period (a reconcile and a warm-pool tending each)
 * kept 2,500 endpoints' Postgres at two busy cores on its own, and scale events waited seconds
 * behind it (bench:warm-handover). Up to this many endpoints, each is swept every period;
 * beyond, each every ⌈n / this⌉ periods.
 */
export const SWEEP_ENDPOINTS_PER_TICK = 500;

/**
 * The period's endpoints are taken in this many slices, spread over it: 500 endpoints' jobs
 * queued at one instant every 15 s kept both workers' every slot busy for a second or two,
 * and a scale event that arrived then waited behind the tendings already running (the
 * 1-event/s p99 of bench:warm-handover).
 */
export const SWEEP_SLICES_PER_TICK = 15;

/** Endpoints one slice of the walk takes. */
export const SWEEP_SLICE_ENDPOINTS = Math.ceil(SWEEP_ENDPOINTS_PER_TICK / SWEEP_SLICES_PER_TICK);

/** The endpoints the sweep walks: live ones, and deleted ones that still have replicas to stop. */
const SWEPT_ENDPOINTS = {
  OR: [{ deletedAt: null }, { replicas: { some: { state: { not: "stopped" as const } } } }],
};

/** How many endpoints a round of the sweep's walk has to take (sweepSliceEndpoints). */
export async function countSweptEndpoints({ db }: { db: DbClient }): Promise<number> {
  return db.endpoint.count({ where: SWEPT_ENDPOINTS });
}

/**
 * The next slice of the sweep's walk: endpoints after `after` in id order (all of them from
 * the start when null) that are live or still have replicas to stop. `nextAfter` is null
 * once the walk has reached the last endpoint: the next round starts from the first.
 */
export async function findSweepSlice({
  db,
  after = null,
  limit = SWEEP_SLICE_ENDPOINTS,
}: {
  db: DbClient;
  /** The last endpoint id the previous slice took (null: from the start). */
  after?: string | null;
  limit?: number;
}) {
  const endpoints = await db.endpoint.findMany({
    where: after === null ? SWEPT_ENDPOINTS : { AND: [SWEPT_ENDPOINTS, { id: { gt: after } }] },
    orderBy: { id: "asc" },
    select: { id: true },
    take: limit,
  });
  const endpointIds = endpoints.map((e) => e.id);
  return {
    endpointIds,
    nextAfter: endpointIds.length < limit ? null : endpointIds.at(-1)!,
  };
}

/** Closed starts not yet taken into account whose own job has had its grace. */
export async function findUnhandledClosedStarts({
  db,
  now = new Date(),
}: {
  db: DbClient;
  now?: Date;
}): Promise<string[]> {
  const closed = await db.coldStart.findMany({
    where: {
      status: { in: ["succeeded", "failed"] },
      closedHandledAt: null,
      finishedAt: { lt: new Date(now.getTime() - CLOSED_GRACE_MS) },
    },
    select: { id: true },
    take: 1_000,
  });
  return closed.map((c) => c.id);
}
