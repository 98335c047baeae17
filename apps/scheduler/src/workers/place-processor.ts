import { DISPATCH_BATCH_MAX, placeReplica, QUEUES, recordProvisionPhases } from "@thaw/core";
import type { WorkerContext } from "./worker-context.ts";

/**
 * place: a batch of the deployment's pending replicas (this job's first): choose node × path,
 * reserve, record the cold starts; then dispatch them and hand on what is left.
 */
export async function processPlace(ctx: WorkerContext, data: unknown): Promise<unknown> {
  const { replicaId } = QUEUES.place.payload.parse(data);
  const result = await placeReplica({ db: ctx.db, replicaId });
  // Every start the batch committed is dispatched, whatever became of this job's replica.
  if (result.placed.length > 0) {
    if (ctx.fleet)
      await recordProvisionPhases({
        db: ctx.db,
        coldStartIds: result.placed.map((p) => p.coldStartId),
      });
    // One dispatch job for the batch: its starts are sent in parallel.
    const ids = result.placed.map((p) => p.coldStartId);
    const batches = [];
    for (let i = 0; i < ids.length; i += DISPATCH_BATCH_MAX)
      batches.push({ coldStartIds: ids.slice(i, i + DISPATCH_BATCH_MAX) });
    await ctx.enqueueMany("dispatch", batches);
  }
  // Replicas whose node another batch filled, and the deployment's next pending one.
  await ctx.enqueueMany(
    "place",
    result.followUps.map((id) => ({ replicaId: id })),
  );
  if (result.kind === "unplaceable") {
    // Left pending with its reason (the dashboard shows it); the sweep places it again
    // once capacity appears.
    ctx.log.info({ replicaId, reason: result.reason }, "replica pending: no feasible option");
    if (ctx.fleet) await ctx.enqueue("fleet", { orgId: result.orgId, reason: "pending-replicas" });
  }
  return result;
}
