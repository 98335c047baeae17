import { QUEUES } from "@thaw/core";
import { runReconcile } from "./reconcile-processor.ts";
import { processWarmPool } from "./warm-pool-processor.ts";
import type { WorkerContext } from "./worker-context.ts";

/**
 * sweep: the periodic sweep's run of one endpoint's reconcile or warm-pool tending, the same
 * use case as the live job's, on the sweep's own workers (QUEUES.sweep).
 */
export async function processSweep(ctx: WorkerContext, data: unknown): Promise<unknown> {
  const { endpointId, work } = QUEUES.sweep.payload.parse(data);
  return work === "reconcile"
    ? // Most of the sweep's reconciles find nothing to change: decided on an unlocked read
      // first, they take the endpoint's lock only when one does.
      runReconcile(ctx, endpointId, { unlockedFirst: true })
    : processWarmPool(ctx, { endpointId });
}
