import { z } from "zod";

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
});
export type SweepWalkState = z.infer<typeof SweepWalkState>;

export const SWEEP_WALK_START: SweepWalkState = { after: null, roundStartedAt: 0 };

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

/** The walk after a slice from `slice.after` was taken at `nowMs`; `nextAfter` null ends the round. */
export function afterSweepSlice(
  state: SweepWalkState,
  slice: { after: string | null },
  nextAfter: string | null,
  nowMs: number,
): SweepWalkState {
  return {
    after: nextAfter,
    roundStartedAt: slice.after === null ? nowMs : state.roundStartedAt,
  };
}
