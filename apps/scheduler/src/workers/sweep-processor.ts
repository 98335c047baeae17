import { setTimeout as pause } from "node:timers/promises";
import { QUEUES, type PlaceReplicaResult } from "@thaw/core";
import { runReconcile } from "./reconcile-processor.ts";
import { processWarmPool } from "./warm-pool-processor.ts";
import type { WorkerContext } from "./worker-context.ts";

export interface SweepSliceResult {
  swept: number;
  /** Scale-ups the slice's reconciles placed, counted by the metrics as place jobs' are. */
  placements: PlaceReplicaResult[];
}

/**
 * sweep: one slice of the periodic sweep's walk, each endpoint's reconcile and then its
 * warm-pool tending, the same use cases as the live jobs', on the sweep's own workers
 * (QUEUES.sweep). The endpoints go one after the other: the sweep is background work, and a
 * slice run serially holds one slot and never a burst of Postgres connections. One endpoint's
 * failure does not stop the others'; the job then fails, and its retry runs the slice again
 * (every step is idempotent, and most find nothing to do).
 */
export async function processSweep(ctx: WorkerContext, data: unknown): Promise<SweepSliceResult> {
  const { endpointIds } = QUEUES.sweep.payload.parse(data);
  const placements: PlaceReplicaResult[] = [];
  const failures: { endpointId: string; err: string }[] = [];
  for (const [i, endpointId] of endpointIds.entries()) {
    const startedAt = performance.now();
    try {
      // Most of the sweep's reconciles find nothing to change: decided on an unlocked read
      // first, they take the endpoint's lock only when one does.
      const reconciled = await runReconcile(ctx, endpointId, { unlockedFirst: true });
      if (reconciled.placement) placements.push(reconciled.placement);
      await processWarmPool(ctx, { endpointId });
    } catch (error) {
      const err = error instanceof Error ? error.message : String(error);
      ctx.log.warn({ endpointId, err }, "sweep of an endpoint failed");
      failures.push({ endpointId, err });
    }
    // Before the next endpoint, a pause as long as this one took (at most SWEEP_PAUSE_MAX_MS):
    // a slice run back to back was a burst of a core's worth of this process and its Postgres
    // backend every second, and the scale events that arrived in it queued behind it for the
    // CPU (bench:warm-handover at 25 events/s on 2 cores).
    if (i < endpointIds.length - 1) await pause(sweepPauseMs(performance.now() - startedAt));
  }
  if (failures.length > 0)
    throw new Error(
      `sweep failed for ${failures.length} of ${endpointIds.length} endpoints (first: ${failures[0]!.endpointId}: ${failures[0]!.err})`,
    );
  return { swept: endpointIds.length, placements };
}

/** The longest pause between two endpoints of a slice: a slow one does not stall the walk. */
export const SWEEP_PAUSE_MAX_MS = 25;

/** The pause after an endpoint that took `tookMs`: as long, within 0..SWEEP_PAUSE_MAX_MS. */
export function sweepPauseMs(tookMs: number): number {
  return Number.isFinite(tookMs) ? Math.min(Math.max(tookMs, 0), SWEEP_PAUSE_MAX_MS) : 0;
}
