import { z } from "zod";
import { SWEEP_SLICE_ENDPOINTS, SWEEP_SLICES_PER_TICK } from "./find-lost-work.ts";

/**
 * Where the sweep's walk round the endpoints stands. One walk for the whole control plane:
 * the schedulers keep it in Redis and take turns at its slices, so two schedulers sweep each
 * endpoint once, not twice (a slice is done in well under a second, before another
 * process's copy of its jobs could be deduplicated against it).
 */
export const SweepWalkState = z.object({
  /** The last endpoint id the walk took (null: the next slice starts a round). */
  after: z.string().nullable(),
  /** When the current round's first slice was taken (epoch ms). */
  roundStartedAt: z.number(),
  /**
   * Endpoints each slice of the current round takes (sweepSliceEndpoints); a walk stored
   * before this was kept takes full slices.
   */
  sliceEndpoints: z.number().int().min(1).max(SWEEP_SLICE_ENDPOINTS).default(SWEEP_SLICE_ENDPOINTS),
});
export type SweepWalkState = z.infer<typeof SweepWalkState>;

export const SWEEP_WALK_START: SweepWalkState = {
  after: null,
  roundStartedAt: 0,
  sliceEndpoints: SWEEP_SLICE_ENDPOINTS,
};

/**
 * Endpoints a slice takes in a round that begins with `endpoints` to sweep: the round spread
 * over the period's slices, at most SWEEP_SLICE_ENDPOINTS. A fleet smaller than a period's
 * worth of full slices was swept in its first two or three, then nothing for the rest of the
 * period; with endpoints of hundreds of replicas each, those slices' reconciles kept both
 * cores busy for a few hundred milliseconds every 15 s, and scale events waited behind them
 * (bench:placement's p99 at 50 events/s).
 */
export function sweepSliceEndpoints(endpoints: number): number {
  return Math.min(SWEEP_SLICE_ENDPOINTS, Math.max(1, Math.ceil(endpoints / SWEEP_SLICES_PER_TICK)));
}

/**
 * Where the next slice starts, or undefined when none is due at `nowMs`. Slices come every
 * sweep period / SWEEP_SLICES_PER_TICK; a round that reaches the last endpoint early (a fleet
 * smaller than a period's worth of slices) waits out the rest of its period, so each
 * endpoint is swept at most once a period however small the fleet.
 */
export function nextSweepSlice(
  state: SweepWalkState,
  nowMs: number,
  periodMs: number,
): { after: string | null } | undefined {
  if (state.after === null && nowMs - state.roundStartedAt < periodMs) return undefined;
  return { after: state.after };
}

/**
 * The walk after a slice from `slice.after` was taken at `nowMs`; `nextAfter` null ends the
 * round. A round's first slice sets the round's slice size, `sliceEndpoints`.
 */
export function afterSweepSlice(
  state: SweepWalkState,
  slice: { after: string | null },
  nextAfter: string | null,
  nowMs: number,
  sliceEndpoints: number = state.sliceEndpoints,
): SweepWalkState {
  const roundBegan = slice.after === null;
  return {
    after: nextAfter,
    roundStartedAt: roundBegan ? nowMs : state.roundStartedAt,
    sliceEndpoints: roundBegan ? sliceEndpoints : state.sliceEndpoints,
  };
}
