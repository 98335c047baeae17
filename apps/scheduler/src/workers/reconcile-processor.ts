import { finishReplicaStop, QUEUES, reconcileEndpoint, type PlaceReplicaResult } from "@thaw/core";
import { placeAndDispatch } from "./place-processor.ts";
import type { WorkerContext } from "./worker-context.ts";

/**
 * reconcile: desired vs actual for one endpoint, then a scale-up's first placement, the
 * follow-up jobs and the drains.
 */
export async function processReconcile(ctx: WorkerContext, data: unknown): Promise<unknown> {
  const { endpointId } = QUEUES.reconcile.payload.parse(data);
  return runReconcile(ctx, endpointId);
}

/** One endpoint's reconcile and what follows it (the live job's, and the sweep's). */
export async function runReconcile(
  ctx: WorkerContext,
  endpointId: string,
  { unlockedFirst = false }: { unlockedFirst?: boolean } = {},
) {
  const result = await reconcileEndpoint({ db: ctx.db, endpointId, unlockedFirst });
  if (result.backoff) ctx.log.warn({ endpointId, reason: result.backoff }, "crash-loop backoff");
  // A scale-up's first batch is placed (and sent) from this job: a queue hop fewer between a
  // scale event and its agent. The other batches, and replicas pending from before (waiting
  // for capacity), go to place jobs as before; one this process dies before placing is a
  // pending replica the next reconcile (the sweep's, within 15 s) hands to a place job.
  const inline = result.created.length > 0 ? result.toPlace[0] : undefined;
  await ctx.enqueueMany(
    "place",
    result.toPlace.filter((id) => id !== inline).map((replicaId) => ({ replicaId })),
  );
  let placement: PlaceReplicaResult | undefined;
  if (inline) {
    try {
      placement = await placeAndDispatch(ctx, inline, result.firstToPlace);
    } catch (error) {
      ctx.log.warn({ endpointId, err: (error as Error).message }, "placing from reconcile failed");
      await ctx.enqueue("place", { replicaId: inline });
    }
  }
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
    // The scale-up's first placement, counted by the scheduler's metrics as a place job's.
    ...(placement ? { placement } : {}),
  };
}
