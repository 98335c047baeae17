import type { DbClient } from "@thaw/db";

/**
 * The last step of a drain: the replica is stopped and its GPUs are free again. Called after
 * the node's agent confirmed the stop, or without it when there is nothing left to stop (no
 * node, or the node is terminated). Idempotent: a second call finds nothing to change.
 */
export async function finishReplicaStop({
  db,
  replicaId,
}: {
  db: DbClient;
  replicaId: string;
}): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const { count } = await tx.replica.updateMany({
      where: { id: replicaId, state: "draining" },
      data: { state: "stopped", stateVersion: { increment: 1 }, stoppedAt: new Date() },
    });
    if (count === 0) return false;
    await tx.gpuReservation.deleteMany({ where: { replicaId } });
    return true;
  });
}
