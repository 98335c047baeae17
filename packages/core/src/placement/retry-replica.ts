import type { DbTransaction } from "@thaw/db";
import { replicaReasonData, type ReplicaReason } from "./replica-reason.ts";

/** Why a start that never ran or failed sends its replica back to pending. */
type RetryReason = Extract<ReplicaReason, { pendingCause: "start_not_accepted" | "start_failed" }>;
/** Why a replica is given up. */
type GiveUpReason = Extract<ReplicaReason, { pendingCause: "start_refused" }>;

/**
 * Puts a replica whose start failed back to `pending`, off its node and with its GPUs freed,
 * so that `place` picks the next-best option (the failed node × path is excluded there).
 * Returns false when the replica moved on meanwhile (drained, stopped) — then nothing retries.
 */
export async function returnReplicaToPending(
  tx: DbTransaction,
  replicaId: string,
  reason: RetryReason,
): Promise<boolean> {
  const { count } = await tx.replica.updateMany({
    where: { id: replicaId, state: { in: ["placed", "starting", "failed"] } },
    data: {
      state: "pending",
      nodeId: null,
      stateVersion: { increment: 1 },
      ...replicaReasonData(reason),
    },
  });
  if (count === 0) return false;
  await tx.gpuReservation.deleteMany({ where: { replicaId } });
  return true;
}

/**
 * Gives up a replica whose start can never succeed on any option (its start request is one
 * the agent protocol refuses): `failed`, off its node, GPUs freed. Reconcile decides about a
 * replacement, under its crash-loop backoff. Returns false when the replica moved on meanwhile.
 */
export async function giveUpReplica(
  tx: DbTransaction,
  replicaId: string,
  reason: GiveUpReason,
): Promise<boolean> {
  const { count } = await tx.replica.updateMany({
    where: { id: replicaId, state: { in: ["placed", "starting"] } },
    data: {
      state: "failed",
      nodeId: null,
      stateVersion: { increment: 1 },
      ...replicaReasonData(reason),
    },
  });
  if (count === 0) return false;
  await tx.gpuReservation.deleteMany({ where: { replicaId } });
  return true;
}
