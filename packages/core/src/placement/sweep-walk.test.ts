import { describe, expect, it } from "vitest";
import { afterSweepSlice, nextSweepSlice, SWEEP_WALK_START } from "./sweep-walk.ts";

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
});
