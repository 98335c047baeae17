import type { DbClient } from "@thaw/db";
import { returnReplicaToPending } from "./retry-replica.ts";

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
  // One statement, so both move together. Telemetry may have overtaken the acknowledgement
  // (a fast start): then the conditions leave both rows as they are.
  await db.$executeRaw`
    WITH cold_start AS (
      UPDATE "ColdStart" SET status = 'dispatched', "dispatchedAt" = now()
      WHERE id = ${coldStartId}::uuid AND status = 'scheduled'
    )
    UPDATE "Replica" SET state = 'starting', "stateVersion" = "stateVersion" + 1, "updatedAt" = now()
    WHERE id = ${replicaId}::uuid AND state = 'placed'`;
}

/**
 * The start never began: the agent refused it (a path the host cannot serve) or could not
 * be reached. The attempt is closed as failed — and handled here, so history ignores it —
 * and the replica goes back to pending for the next-best option. Returns the replica to
 * place again, if any.
 */
export async function recordDispatchFailed({
  db,
  coldStartId,
  reason,
}: {
  db: DbClient;
  coldStartId: string;
  reason: string;
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
    const retry = await returnReplicaToPending(
      tx,
      coldStart.replicaId,
      `${coldStart.path} start not accepted (${reason}); trying the next-best option`.slice(0, 500),
    );
    return retry ? coldStart.replicaId : null;
  });
}
