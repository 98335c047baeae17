import { directSql, Prisma, type DbClient } from "@thaw/db";
import { coalesceByTick } from "./coalesce-by-tick.ts";
import { giveUpReplica, returnReplicaToPending } from "./retry-replica.ts";

/** The agent accepted the start: the cold start is dispatched and the replica starting. */
export async function recordDispatched({
  db,
  coldStartId,
  replicaId,
}: {
  db: DbClient;
  coldStartId: string;
  replicaId: string;
}): Promise<void> {
  await markDispatched(db, { coldStartId, replicaId });
}

/**
 * One statement, so both rows move together — and one for the acknowledgements of one turn
 * of the event loop (coalesce-by-tick.ts), rows taken in id order. Telemetry may have
 * overtaken an acknowledgement (a fast start): then the conditions leave both rows as they are.
 */
const markDispatched = coalesceByTick<{ coldStartId: string; replicaId: string }, true>(
  async (db, starts) => {
    const sorted = [...starts].sort((a, b) =>
      a.coldStartId < b.coldStartId ? -1 : a.coldStartId > b.coldStartId ? 1 : 0,
    );
    await directSql(db).execute(Prisma.sql`
      WITH v AS (
        SELECT * FROM unnest(${sorted.map((s) => s.coldStartId)}::uuid[],
          ${sorted.map((s) => s.replicaId)}::uuid[]) AS v(cold_start_id, replica_id)
      ), cold_start AS (
        UPDATE "ColdStart" AS c SET status = 'dispatched', "dispatchedAt" = now()
        FROM v WHERE c.id = v.cold_start_id AND c.status = 'scheduled'
      )
      UPDATE "Replica" AS r
      SET state = 'starting', "stateVersion" = r."stateVersion" + 1, "updatedAt" = now()
      FROM v WHERE r.id = v.replica_id AND r.state = 'placed'`);
    return new Map(starts.map((s) => [s, true as const]));
  },
);

/**
 * The start never began: the agent refused it (a path the host cannot serve) or could not
 * be reached. The attempt is closed as failed — and handled here, so history ignores it —
 * and the replica goes back to pending for the next-best option. Returns the replica to
 * place again, if any. With `retry: false` (a request no agent would take: every option
 * would fail alike) the replica is given up instead, its GPUs freed all the same.
 */
export async function recordDispatchFailed({
  db,
  coldStartId,
  reason,
  retry = true,
}: {
  db: DbClient;
  coldStartId: string;
  reason: string;
  retry?: boolean;
}): Promise<string | null> {
  return db.$transaction(async (tx) => {
    const coldStart = await tx.coldStart.findUnique({
      where: { id: coldStartId },
      select: { replicaId: true, path: true },
    });
    if (!coldStart) return null;
    const now = new Date();
    const { count } = await tx.coldStart.updateMany({
      where: { id: coldStartId, status: { in: ["scheduled", "dispatched"] } },
      data: {
        status: "failed",
        error: `not started: ${reason}`.slice(0, 4_000),
        finishedAt: now,
        closedHandledAt: now,
      },
    });
    if (count === 0) return null;
    if (!retry) {
      await giveUpReplica(tx, coldStart.replicaId, {
        pendingCause: "start_refused",
        path: coldStart.path,
        failure: reason.slice(0, 400),
      });
      return null;
    }
    const retried = await returnReplicaToPending(tx, coldStart.replicaId, {
      pendingCause: "start_not_accepted",
      path: coldStart.path,
      failure: reason.slice(0, 400),
    });
    return retried ? coldStart.replicaId : null;
  });
}
