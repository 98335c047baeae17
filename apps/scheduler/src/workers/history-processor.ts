import {
  evaluateColdStartAlerts,
  handleClosedColdStart,
  QUEUES,
  recordColdStartWebhookEvents,
} from "@thaw/core";
import type { WorkerContext } from "./worker-context.ts";

/** history: a closed cold start updates the predictor's cells, or retries its replica. */
export async function processHistory(ctx: WorkerContext, data: unknown): Promise<unknown> {
  const { coldStartId } = QUEUES.history.payload.parse(data);
  const result = await handleClosedColdStart({ db: ctx.db, coldStartId });
  if (result.quarantinedSnapshotId)
    ctx.log.warn(
      { snapshotId: result.quarantinedSnapshotId },
      "snapshot quarantined after repeated restore failures",
    );
  if (result.retryReplicaId) await ctx.enqueue("place", { replicaId: result.retryReplicaId });
  // After a successful start (ARCHITECTURE.md §3 step 7): might a snapshot of it pay off now?
  if (result.succeededDeploymentId)
    await ctx.enqueue("snapshot", { deploymentId: result.succeededDeploymentId });
  // The start's webhook events, whether or not this run handled it: a run after a crash
  // between the two finds the start handled and still records them (keyed, so never twice).
  const deliveryIds = await recordColdStartWebhookEvents({
    db: ctx.db,
    coldStartId,
    quarantinedSnapshotId: result.quarantinedSnapshotId,
  });
  // Then the alert rules watching its endpoint (episodes open once: a re-run adds nothing).
  deliveryIds.push(...(await evaluateColdStartAlerts({ db: ctx.db, coldStartId })));
  await ctx.enqueueMany(
    "webhookDelivery",
    deliveryIds.map((deliveryId) => ({ deliveryId })),
  );
  return result;
}
