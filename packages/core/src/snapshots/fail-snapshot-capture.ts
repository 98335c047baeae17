import type { DbClient } from "@thaw/db";

/**
 * A capture the agent refused or could not finish: the snapshot is deleted with the reason,
 * which also counts towards the deployment's backoff (decideSnapshotCapture). Returns the
 * endpoint to reconcile — the source replica may not have survived a half-done capture —
 * or null when the snapshot was not capturing (already completed or failed).
 */
export async function failSnapshotCapture({
  db,
  snapshotId,
  reason,
}: {
  db: DbClient;
  snapshotId: string;
  reason: string;
}): Promise<{ endpointId: string | null }> {
  const { count } = await db.snapshot.updateMany({
    where: { id: snapshotId, status: "capturing" },
    data: { status: "deleted", error: reason.slice(0, 2_000) },
  });
  if (count === 0) return { endpointId: null };
  const snapshot = await db.snapshot.findUniqueOrThrow({
    where: { id: snapshotId },
    select: { deployment: { select: { endpointId: true } } },
  });
  return { endpointId: snapshot.deployment.endpointId };
}
