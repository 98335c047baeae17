import { prepareDispatch, QUEUES, recordDispatched, recordDispatchFailed } from "@thaw/core";
import { AgentApiError, StartReplicaRequest } from "@thaw/node-agent-client";
import type { Job } from "bullmq";
import type { WorkerContext } from "./worker-context.ts";

/**
 * dispatch: tell the node's agent to start the replica. The agent acknowledges at once
 * (starts are idempotent per replica), phases follow as telemetry. A refusal, or an agent
 * still unreachable on the job's last attempt, closes the attempt and places the replica
 * again with the next-best option.
 */
export async function processDispatch(
  ctx: WorkerContext,
  data: unknown,
  job?: Pick<Job, "attemptsMade" | "opts">,
): Promise<unknown> {
  const { coldStartId } = QUEUES.dispatch.payload.parse(data);
  const plan = await prepareDispatch({ db: ctx.db, coldStartId });
  if (plan.kind === "skip") return plan;
  if (plan.kind === "fail") return fail(ctx, coldStartId, plan.reason);

  const request = StartReplicaRequest.parse(plan.request);
  try {
    await ctx.agent({ id: plan.nodeId, agentUrl: plan.agentUrl }).startReplica(request);
  } catch (error) {
    if (!(error instanceof AgentApiError)) throw error;
    const lastAttempt = job ? job.attemptsMade + 1 >= (job.opts.attempts ?? 1) : true;
    if (error.retryable && !lastAttempt) throw error;
    return fail(ctx, coldStartId, `${error.code}: ${error.message}`);
  }
  await recordDispatched({ db: ctx.db, coldStartId, replicaId: request.replicaId });
  return { kind: "dispatched", nodeId: plan.nodeId, path: request.path };
}

async function fail(ctx: WorkerContext, coldStartId: string, reason: string) {
  const replicaId = await recordDispatchFailed({ db: ctx.db, coldStartId, reason });
  ctx.log.warn({ coldStartId, reason, retrying: replicaId !== null }, "dispatch failed");
  if (replicaId) await ctx.enqueue("place", { replicaId });
  return { kind: "failed", reason };
}
