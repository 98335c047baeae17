import { Prisma, prismaRows, type DbClient } from "@thaw/db";
import { replicaReasonData } from "../placement/replica-reason.ts";

/**
 * The last step of putting a replica to sleep: the node's agent has slept its engine and given
 * its GPUs back, so the row becomes `sleeping` — remembering the GPUs it slept on (the only
 * ones it can wake on), its level and the host memory it holds — and its reservations go, so
 * placement may give those GPUs to others. The state changes before the reservations are
 * deleted: the GPU-time trigger counts the draining interval with the GPUs it held. Only from
 * where the worker left it (draining, to be put to sleep), so a replica reconcile or a stop
 * took meanwhile is not revived. Idempotent.
 */
export async function finishReplicaSleep({
  db,
  replicaId,
  sleepLevel,
  sleepingBytes,
}: {
  db: DbClient;
  replicaId: string;
  sleepLevel: 1 | 2;
  sleepingBytes: number;
}): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const slept = await prismaRows(tx)<{ id: string }>(Prisma.sql`
      UPDATE "Replica" SET state = 'sleeping', "stateVersion" = "stateVersion" + 1,
        "sleepLevel" = ${sleepLevel}, "sleepingBytes" = ${BigInt(Math.round(sleepingBytes))},
        "sleepingGpus" = ARRAY(SELECT g."gpuIndex" FROM "GpuReservation" g
          WHERE g."replicaId" = ${replicaId}::uuid ORDER BY g."gpuIndex"),
        "pendingCause" = NULL, "drainIntent" = NULL, "reasonDetail" = '{}', "updatedAt" = now()
      WHERE id = ${replicaId}::uuid AND state = 'draining' AND "drainIntent" = 'sleep_candidate'
      RETURNING id::text`);
    if (slept.length === 0) return false;
    await tx.gpuReservation.deleteMany({ where: { replicaId } });
    return true;
  });
}

/** A sleep the agent refused (no sleep API answered, the replica gone): stop it like any drain. */
export async function abandonReplicaSleep({
  db,
  replicaId,
  failure,
}: {
  db: DbClient;
  replicaId: string;
  /** The class of the agent's refusal, as the tenant may read it (never the agent's own words). */
  failure: string;
}): Promise<void> {
  await db.replica.updateMany({
    where: { id: replicaId, state: "draining", drainIntent: "sleep_candidate" },
    data: {
      stateVersion: { increment: 1 },
      ...replicaReasonData({ drainIntent: "park_refused", failure: failure.slice(0, 400) }),
    },
  });
}
