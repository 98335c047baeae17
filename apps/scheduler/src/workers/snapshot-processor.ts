import {
  beginSnapshotCapture,
  classifyAgentFailure,
  completeSnapshotCapture,
  failSnapshotCapture,
  protocolRefusal,
  QUEUES,
} from "@thaw/core";
import { AgentApiError } from "@thaw/node-agent-client";
import { CaptureSnapshotRequest } from "@thaw/protocol";
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
  const plan = await beginSnapshotCapture({
    db: ctx.db,
    deploymentId,
    snapshotStore: ctx.snapshotStore ?? null,
  });
  if (plan.kind === "skip") return plan;
  ctx.log.info(
    { deploymentId, snapshotId: plan.snapshotId, resumed: plan.resumed, reason: plan.reason },
    "capturing a snapshot",
  );

  const fail = async (reason: string, details: Record<string, unknown> = {}) => {
    const failed = await failSnapshotCapture({ db: ctx.db, snapshotId: plan.snapshotId, reason });
    ctx.log.warn(
      { deploymentId, snapshotId: plan.snapshotId, reason, ...details },
      "snapshot capture failed",
    );
    if (failed.endpointId) await ctx.enqueue("reconcile", { endpointId: failed.endpointId });
    return { kind: "failed", snapshotId: plan.snapshotId, reason };
  };
  // A request the protocol refuses can never be sent: failed at once, no retry.
  const request = CaptureSnapshotRequest.safeParse(plan.request);
  if (!request.success)
    return fail(protocolRefusal(request.error.issues[0]), { issues: request.error.issues });

  let pushed: boolean;
  let digest: string;
  try {
    ({ pushed, digest } = await ctx
      .agent({ id: plan.nodeId, agentUrl: plan.agentUrl })
      .captureSnapshot(request.data));
  } catch (error) {
    if (!(error instanceof AgentApiError)) throw error;
    const lastAttempt = job ? job.attemptsMade + 1 >= (job.opts.attempts ?? 1) : true;
    if (error.retryable && !lastAttempt) throw error;
    // Recorded as a class; the operator's log has the agent's answer.
    return fail(classifyAgentFailure(error, "capture"), {
      status: error.status,
      code: error.code,
      err: error.message,
    });
  }
  const done = await completeSnapshotCapture({
    db: ctx.db,
    snapshotId: plan.snapshotId,
    pushed,
    digest,
  });
  if (done.endpointId) await ctx.enqueue("reconcile", { endpointId: done.endpointId });
  return { kind: "captured", snapshotId: plan.snapshotId, completed: done.completed };
}
