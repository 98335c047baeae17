import { describe, expect, it } from "vitest";
import { SWEEP_PAUSE_MAX_MS, sweepPauseMs } from "./sweep-processor.ts";

// The sweep rests between a slice's endpoints as long as the last one took, so a slice is
// half work, half idle, never a burst; a slow endpoint does not stall the walk.
describe("the sweep's pause between endpoints", () => {
  it("is as long as the endpoint took, up to the cap", () => {
    expect(sweepPauseMs(0)).toBe(0);
    expect(sweepPauseMs(3.5)).toBe(3.5);
    expect(sweepPauseMs(SWEEP_PAUSE_MAX_MS)).toBe(SWEEP_PAUSE_MAX_MS);
    expect(sweepPauseMs(SWEEP_PAUSE_MAX_MS + 0.1)).toBe(SWEEP_PAUSE_MAX_MS);
    expect(sweepPauseMs(60_000)).toBe(SWEEP_PAUSE_MAX_MS);
  });

  it("is never negative or unbounded, whatever the clock read", () => {
    expect(sweepPauseMs(-5)).toBe(0);
    expect(sweepPauseMs(Number.NaN)).toBe(0);
    expect(sweepPauseMs(Number.POSITIVE_INFINITY)).toBe(0);
  });
});
