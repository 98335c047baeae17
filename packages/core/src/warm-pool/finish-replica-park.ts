import type { DbClient } from "@thaw/db";
import { replicaReasonData } from "../placement/replica-reason.ts";

/**
 * The last step of a park: the node's agent has paused the replica, so it joins the warm pool
 * (placement may now hand it over) and keeps its GPUs. Only from where the worker left it — a
 * drained replica still marked for parking, or a ready pre-warmed one — so a replica that
 * reconcile or a release took meanwhile is not revived. Idempotent.
 */
export async function finishReplicaPark({
  db,
  replicaId,
}: {
  db: DbClient;
  replicaId: string;
}): Promise<boolean> {
  const { count } = await db.replica.updateMany({
    where: {
      id: replicaId,
      OR: [
        { state: "draining", drainIntent: "park_candidate" },
        { state: "ready", prewarm: true },
      ],
    },
    data: { state: "warm", stateVersion: { increment: 1 }, ...replicaReasonData(null) },
  });
  return count === 1;
}

/** A park the agent refused (the replica is gone or not running): stop it like any drain. */
export async function abandonReplicaPark({
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
    where: {
      id: replicaId,
      OR: [
        { state: "draining", drainIntent: "park_candidate" },
        { state: "ready", prewarm: true },
      ],
    },
    data: {
      state: "draining",
      stateVersion: { increment: 1 },
      ...replicaReasonData({ drainIntent: "park_refused", failure: failure.slice(0, 400) }),
    },
  });
}
