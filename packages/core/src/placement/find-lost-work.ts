import type { DbClient } from "@thaw/db";

// The periodic sweep's reading of Postgres (ARCHITECTURE.md §3: "anything lost in Redis is
// repaired from Postgres"): every endpoint to reconcile — which re-enqueues its pending
// placements, lost dispatches and drains — and every closed start not yet taken into account.

/** A closed start is given this long for its own job before the sweep takes it. */
export const CLOSED_GRACE_MS = 10_000;

export async function findLostWork({ db, now = new Date() }: { db: DbClient; now?: Date }) {
  const [endpoints, closed] = await Promise.all([
    db.endpoint.findMany({
      where: { OR: [{ deletedAt: null }, { replicas: { some: { state: { not: "stopped" } } } }] },
      select: { id: true },
    }),
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
  return { endpointIds: endpoints.map((e) => e.id), closedColdStartIds: closed.map((c) => c.id) };
}
