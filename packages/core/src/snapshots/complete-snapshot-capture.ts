import type { DbClient } from "@thaw/db";
import { replicaReasonData } from "../placement/replica-reason.ts";

// The snapshot worker's last step after the agent answered: the snapshot becomes `ready`, the
// source node's copy is recorded in its inventory (so placement sees `snapshot-local` there),
// and the source replica — which the agent stops once its checkpoint is written — is stopped
// here too, its GPUs released, so that reconcile replaces it (by restore, where that is fastest).
// Idempotent: only a `capturing` snapshot completes, so a resumed or repeated run changes nothing.

export interface CompletedSnapshotCapture {
  completed: boolean;
  /** The endpoint to reconcile: its source replica stopped. */
  endpointId: string | null;
  nodeId: string | null;
}

const MANIFEST_DIGEST = /^sha256:[0-9a-f]{64}$/;

export async function completeSnapshotCapture({
  db,
  snapshotId,
  pushed,
  digest,
}: {
  db: DbClient;
  snapshotId: string;
  /** The agent pushed the checkpoint to the snapshot store (any compatible node can fetch it). */
  pushed: boolean;
  /** The checkpoint image's manifest digest the agent wrote: every restore fetches by it. */
  digest: string;
}): Promise<CompletedSnapshotCapture> {
  // Without its digest a snapshot could only be fetched by tag: it never becomes ready.
  if (!MANIFEST_DIGEST.test(digest))
    throw new Error(`snapshot ${snapshotId}: ${JSON.stringify(digest)} is not a sha256 digest`);
  return db.$transaction(async (tx) => {
    const { count } = await tx.snapshot.updateMany({
      where: { id: snapshotId, status: "capturing" },
      data: { status: "ready", location: pushed ? "store" : "node", error: null, digest },
    });
    if (count === 0) return { completed: false, endpointId: null, nodeId: null };
    const snapshot = await tx.snapshot.findUniqueOrThrow({
      where: { id: snapshotId },
      include: { deployment: { select: { endpointId: true } } },
    });
    if (snapshot.sourceNodeId)
      await tx.nodeSnapshot.createMany({
        data: [{ nodeId: snapshot.sourceNodeId, snapshotId }],
        skipDuplicates: true,
      });
    if (snapshot.sourceReplicaId) {
      // A replica drained meanwhile is reconcile's to finish (its stop on the node is idempotent).
      const stopped = await tx.replica.updateMany({
        where: { id: snapshot.sourceReplicaId, state: "ready" },
        data: {
          state: "stopped",
          stateVersion: { increment: 1 },
          stoppedAt: new Date(),
          ...replicaReasonData({ drainIntent: "snapshot_captured", snapshotId }),
        },
      });
      if (stopped.count > 0)
        await tx.gpuReservation.deleteMany({ where: { replicaId: snapshot.sourceReplicaId } });
    }
    return {
      completed: true,
      endpointId: snapshot.deployment.endpointId,
      nodeId: snapshot.sourceNodeId,
    };
  });
}
