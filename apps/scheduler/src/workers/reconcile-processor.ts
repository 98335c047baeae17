import { finishReplicaStop, QUEUES, reconcileEndpoint } from "@thaw/core";
import type { WorkerContext } from "./worker-context.ts";

/** reconcile: desired vs actual for one endpoint, then the follow-up jobs and the drains. */
export async function processReconcile(ctx: WorkerContext, data: unknown): Promise<unknown> {
  const { endpointId } = QUEUES.reconcile.payload.parse(data);
  const result = await reconcileEndpoint({ db: ctx.db, endpointId });
  if (result.backoff) ctx.log.warn({ endpointId, reason: result.backoff }, "crash-loop backoff");
  await ctx.enqueueMany(
    "place",
    result.toPlace.map((replicaId) => ({ replicaId })),
  );
  // Lost dispatches one job each: a batch of one is deduplicated exactly on its start.
  await ctx.enqueueMany(
    "dispatch",
    result.toDispatch.map((coldStartId) => ({ coldStartIds: [coldStartId] })),
  );
  // Scaled-down ready replicas: the warm pool parks them or stops them.
  if (result.parking.length > 0) await ctx.enqueue("warmPool", { endpointId });
  let stopped = 0;
  for (const drain of result.toStop) {
    if (drain.action === "wait") continue;
    if (drain.action === "stop-on-node" && drain.nodeId) {
      const node = await ctx.db.node.findUnique({
        where: { id: drain.nodeId },
        select: { id: true, agentUrl: true },
      });
      if (node?.agentUrl) {
        // Idempotent on the agent: an unknown replica answers found: false.
        await ctx.agent({ id: node.id, agentUrl: node.agentUrl }).stopReplica(drain.replicaId);
      }
    }
    if (await finishReplicaStop({ db: ctx.db, replicaId: drain.replicaId })) stopped++;
  }
  return {
    desired: result.desired,
    created: result.created.length,
    placing: result.toPlace.length,
    stopped,
    backoff: result.backoff,
  };
}
