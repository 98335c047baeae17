import { describe, expect, it } from "vitest";
import { SWEEP_SLICE_ENDPOINTS, SWEEP_SLICES_PER_TICK } from "./find-lost-work.ts";
import {
  afterSweepSlice,
  nextSweepSlice,
  SWEEP_WALK_START,
  sweepSliceEndpoints,
  SweepWalkState,
} from "./sweep-walk.ts";

const PERIOD = 15_000;
const T0 = 1_800_000_000_000;

describe("the sweep's walk", () => {
  it("takes slices back to back through a round and starts the next a period after the last began", () => {
    let state = SWEEP_WALK_START;
    const first = nextSweepSlice(state, T0, PERIOD);
    expect(first).toEqual({ after: null });
    state = afterSweepSlice(state, first!, "e34", T0);
    // Mid-round, every tick of the slice clock takes the next slice.
    const second = nextSweepSlice(state, T0 + 1_000, PERIOD);
    expect(second).toEqual({ after: "e34" });
    state = afterSweepSlice(state, second!, null, T0 + 1_000);
    // The round ended after two slices: nothing until its period is out.
    expect(nextSweepSlice(state, T0 + 2_000, PERIOD)).toBeUndefined();
    expect(nextSweepSlice(state, T0 + PERIOD - 1, PERIOD)).toBeUndefined();
    expect(nextSweepSlice(state, T0 + PERIOD, PERIOD)).toEqual({ after: null });
  });

  it("lets a round longer than the period run on, and starts the next at once", () => {
    let state = afterSweepSlice(SWEEP_WALK_START, { after: null }, "e1", T0);
    state = afterSweepSlice(state, { after: "e1" }, null, T0 + 20_000);
    expect(nextSweepSlice(state, T0 + 20_001, PERIOD)).toEqual({ after: null });
  });

  it("starts its first round at once, and stays put while a due slice is not taken", () => {
    expect(nextSweepSlice(SWEEP_WALK_START, T0, PERIOD)).toEqual({ after: null });
    // Skipped (the last slice's jobs still wait): the same slice is due next time.
    expect(nextSweepSlice(SWEEP_WALK_START, T0 + 70, PERIOD)).toEqual({ after: null });
  });

  it("spreads a small fleet over the period's slices, and takes full slices of a large one", () => {
    expect(sweepSliceEndpoints(0)).toBe(1);
    expect(sweepSliceEndpoints(3)).toBe(1);
    expect(sweepSliceEndpoints(40)).toBe(3);
    // However small or large the fleet, a round of slices at most this size covers it in a
    // period's slices, or takes full slices.
    for (const n of [1, 14, 15, 16, 100, 509, 510, 511, 5_000]) {
      const size = sweepSliceEndpoints(n);
      expect(size).toBeLessThanOrEqual(SWEEP_SLICE_ENDPOINTS);
      if (size < SWEEP_SLICE_ENDPOINTS)
        expect(size * SWEEP_SLICES_PER_TICK).toBeGreaterThanOrEqual(n);
    }
  });

  it("keeps the size its round began with, and reads a walk stored before sizes were kept", () => {
    let state = afterSweepSlice(SWEEP_WALK_START, { after: null }, "e3", T0, 3);
    expect(state.sliceEndpoints).toBe(3);
    state = afterSweepSlice(state, { after: "e3" }, "e6", T0 + 1_000, 7);
    expect(state.sliceEndpoints).toBe(3);
    expect(SweepWalkState.parse({ after: "e6", roundStartedAt: T0 }).sliceEndpoints).toBe(
      SWEEP_SLICE_ENDPOINTS,
    );
  });
});
