import { placeReplica, QUEUES, recordProvisionPhases } from "@thaw/core";
import type { WorkerContext } from "./worker-context.ts";

/** place: choose node × path, reserve, record the cold start; then dispatch it. */
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
    await ctx.enqueueMany(
      "dispatch",
      result.placed.map(({ coldStartId }) => ({ coldStartId })),
    );
  }
  if (result.kind === "skipped" && result.retry) {
    await ctx.enqueue("place", { replicaId });
  } else if (result.kind === "unplaceable") {
    // Left pending with its reason (the dashboard shows it); the sweep places it again
    // once capacity appears.
    ctx.log.info({ replicaId, reason: result.reason }, "replica pending: no feasible option");
    if (ctx.fleet) await ctx.enqueue("fleet", { orgId: result.orgId, reason: "pending-replicas" });
  }
  return result;
}
