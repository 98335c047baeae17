import {
  beginSnapshotCapture,
  completeSnapshotCapture,
  failSnapshotCapture,
  QUEUES,
} from "@thaw/core";
import { AgentApiError, CaptureSnapshotRequest } from "@thaw/node-agent-client";
import type { Job } from "bullmq";
import type { WorkerContext } from "./worker-context.ts";

/**
 * snapshot: decide whether capturing the deployment pays off (core records the capture), have
 * the source node's agent checkpoint the replica — idempotent on the snapshot id, so a retry
 * or a second scheduler resuming the same capture gets the same checkpoint — then record it.
 * The agent stops the captured replica, so its endpoint is reconciled: the replacement can
 * come up by restore from the new snapshot.
 */
export async function processSnapshot(
  ctx: WorkerContext,
  data: unknown,
  job?: Pick<Job, "attemptsMade" | "opts">,
): Promise<unknown> {
  const { deploymentId } = QUEUES.snapshot.payload.parse(data);
  const plan = await beginSnapshotCapture({ db: ctx.db, deploymentId });
  if (plan.kind === "skip") return plan;
  ctx.log.info(
    { deploymentId, snapshotId: plan.snapshotId, resumed: plan.resumed, reason: plan.reason },
    "capturing a snapshot",
  );

  let pushed: boolean;
  try {
    const request = CaptureSnapshotRequest.parse(plan.request);
    ({ pushed } = await ctx
      .agent({ id: plan.nodeId, agentUrl: plan.agentUrl })
      .captureSnapshot(request));
  } catch (error) {
    if (!(error instanceof AgentApiError)) throw error;
    const lastAttempt = job ? job.attemptsMade + 1 >= (job.opts.attempts ?? 1) : true;
    if (error.retryable && !lastAttempt) throw error;
    const reason = `${error.code}: ${error.message}`;
    const failed = await failSnapshotCapture({ db: ctx.db, snapshotId: plan.snapshotId, reason });
    ctx.log.warn({ deploymentId, snapshotId: plan.snapshotId, reason }, "snapshot capture failed");
    if (failed.endpointId) await ctx.enqueue("reconcile", { endpointId: failed.endpointId });
    return { kind: "failed", snapshotId: plan.snapshotId, reason };
  }
  const done = await completeSnapshotCapture({ db: ctx.db, snapshotId: plan.snapshotId, pushed });
  if (done.endpointId) await ctx.enqueue("reconcile", { endpointId: done.endpointId });
  return { kind: "captured", snapshotId: plan.snapshotId, completed: done.completed };
}
