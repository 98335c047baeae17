import type { DbClient } from "@thaw/db";

// The periodic sweep's reading of Postgres (ARCHITECTURE.md §3: "anything lost in Redis is
// repaired from Postgres"): every endpoint to reconcile — which re-enqueues its pending
// placements, lost dispatches and drains — and every closed start not yet taken into account.

/** A closed start is given this long for its own job before the sweep takes it. */
export const CLOSED_GRACE_MS = 10_000;

/**
 * Endpoints per sweep: the sweep walks the endpoints in id order, this many a tick, and
 * wraps round. Its cost is bounded whatever the fleet: a sweep of every endpoint every tick
 * (a reconcile and a warm-pool tending each) kept 2,500 endpoints' Postgres at two busy cores
 * on its own, and scale events waited seconds behind it (bench:warm-handover). Up to this
 * many endpoints, each is swept every tick as before; beyond, each every ⌈n / this⌉ ticks.
 */
export const SWEEP_ENDPOINTS_PER_TICK = 500;

export async function findLostWork({
  db,
  now = new Date(),
  after = null,
  limit = SWEEP_ENDPOINTS_PER_TICK,
}: {
  db: DbClient;
  now?: Date;
  /** The last endpoint id the previous tick swept (null: from the start). */
  after?: string | null;
  limit?: number;
}) {
  const where = {
    OR: [{ deletedAt: null }, { replicas: { some: { state: { not: "stopped" as const } } } }],
  };
  const slice = (from: string | null, take: number) =>
    db.endpoint.findMany({
      where: from === null ? where : { AND: [where, { id: { gt: from } }] },
      orderBy: { id: "asc" },
      select: { id: true },
      take,
    });
  const [endpoints, closed] = await Promise.all([
    // This tick's slice, wrapping round to the first endpoints when the walk reaches the end.
    slice(after, limit).then(async (first) =>
      first.length < limit && after !== null
        ? [...first, ...(await slice(null, limit - first.length)).filter((e) => e.id <= after)]
        : first,
    ),
    db.coldStart.findMany({
      where: {
        status: { in: ["succeeded", "failed"] },
        closedHandledAt: null,
        finishedAt: { lt: new Date(now.getTime() - CLOSED_GRACE_MS) },
      },
      select: { id: true },
      take: 1_000,
    }),
  ]);
  const endpointIds = endpoints.map((e) => e.id);
  return {
    endpointIds,
    closedColdStartIds: closed.map((c) => c.id),
    /** Where the next tick starts: after the last endpoint swept now, or from the start. */
    nextAfter: endpointIds.length < limit ? null : endpointIds.at(-1)!,
  };
}
