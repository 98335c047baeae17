import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { costOptimalWindows, type CostOptimalWindowsInput } from "./cost-optimal-windows.ts";
import {
  emptyIdleTimeHistogram,
  HISTOGRAM_BIN_SECONDS,
  HISTOGRAM_BINS,
  recordIdleTime,
  type IdleTimeHistogram,
} from "./idle-time-histogram.ts";

const histogramOf = (idleSeconds: number[]): IdleTimeHistogram =>
  idleSeconds.reduce(recordIdleTime, emptyIdleTimeHistogram());

/**
 * The plain reference: the expected cost of windows (P, K) over a histogram, one gap at a
 * time at its bin's middle, straight from the table in cost-optimal-windows.ts.
 */
function referenceCost(
  input: CostOptimalWindowsInput,
  P: number,
  K: number,
): { wait: number; idle: number } {
  const S = input.bestNonWarmSeconds;
  const g = input.gpusPerReplica;
  const W = input.waitSecondsPerMiss ?? S;
  const gaps: [number, number][] = input.histogram.bins.map((count, i) => [
    (i + 0.5) * HISTOGRAM_BIN_SECONDS,
    count,
  ]);
  gaps.push([Number.POSITIVE_INFINITY, input.histogram.outOfBounds]);
  let wait = 0;
  let idle = 0;
  let total = 0;
  for (const [G, count] of gaps) {
    if (count === 0) continue;
    total += count;
    if (P === 0) {
      if (G < K) idle += count * g * G;
      else {
        idle += count * g * K;
        wait += count * W;
      }
      continue;
    }
    const R = Math.max(0, P - S);
    if (G < R) wait += count * W;
    else if (G < P) wait += (count * (W * (P - G))) / S;
    else if (G < P + K) idle += count * g * (G - P);
    else {
      idle += count * g * K;
      wait += count * W;
    }
  }
  return { wait: wait / total, idle: idle / total };
}

const histograms = fc
  .array(
    fc.oneof(
      fc.integer({ min: 0, max: HISTOGRAM_BINS * HISTOGRAM_BIN_SECONDS - 1 }),
      fc.constant(HISTOGRAM_BINS * HISTOGRAM_BIN_SECONDS * 2),
    ),
    { minLength: 1, maxLength: 60 },
  )
  .map(histogramOf);

const inputs = fc.record({
  histogram: histograms,
  bestNonWarmSeconds: fc.double({ min: 1, max: 600, noNaN: true }),
  gpusPerReplica: fc.integer({ min: 1, max: 8 }),
  gpuSecondsPerWaitSecond: fc.double({ min: 0, max: 1_000, noNaN: true }),
  waitSecondsPerMiss: fc.option(fc.double({ min: 0, max: 3_000, noNaN: true }), {
    nil: undefined,
  }),
});

describe("windows chosen by expected cost", () => {
  it("keeps a replica over gaps of minutes when a miss costs more, re-warms before a regular one", () => {
    // Requests every 5 minutes; a start takes a minute.
    const regular = histogramOf(Array.from({ length: 40 }, () => 5 * 60 + 10));
    const base = { histogram: regular, bestNonWarmSeconds: 60, gpusPerReplica: 1 };
    // Free waits: never hold a GPU idle.
    expect(costOptimalWindows({ ...base, gpuSecondsPerWaitSecond: 0 })).toMatchObject({
      preWarmSeconds: 0,
      keepAliveSeconds: 0,
    });
    // Dear waits: release, then re-warm so the replica is ready at 5 minutes, just before
    // the request (60 s of start + 30 s idle beats 330 s held idle).
    const dear = costOptimalWindows({ ...base, gpuSecondsPerWaitSecond: 10 });
    expect(dear).toMatchObject({ preWarmSeconds: 300, reWarmAtSeconds: 240 });
    expect(dear.keepAliveSeconds).toBeGreaterThanOrEqual(60);
    expect(dear.expectedWaitSeconds).toBe(0);
  });

  it("keeps from the start when the next request comes soon and irregularly", () => {
    const soon = histogramOf(Array.from({ length: 50 }, (_, i) => (i % 10) * 12));
    const w = costOptimalWindows({
      histogram: soon,
      bestNonWarmSeconds: 120,
      gpusPerReplica: 1,
      gpuSecondsPerWaitSecond: 4,
    });
    expect(w.preWarmSeconds).toBe(0);
    expect(w.keepAliveSeconds).toBeGreaterThanOrEqual(120);
  });

  it("without history, keeps for ski rental's break-even: one miss's cost in GPU-seconds", () => {
    const w = costOptimalWindows({
      histogram: emptyIdleTimeHistogram(),
      bestNonWarmSeconds: 90,
      gpusPerReplica: 2,
      gpuSecondsPerWaitSecond: 4,
    });
    // 4 GPU-s per second × 90 s of wait / 2 GPUs = 180 s.
    expect(w).toMatchObject({ preWarmSeconds: 0, keepAliveSeconds: 180 });
  });

  it("borrows a thin endpoint's windows from similar ones, and moves to its own data", () => {
    const pooled = histogramOf(Array.from({ length: 200 }, () => 5 * 60 + 10));
    const thin = costOptimalWindows({
      histogram: emptyIdleTimeHistogram(),
      prior: pooled,
      bestNonWarmSeconds: 60,
      gpusPerReplica: 1,
      gpuSecondsPerWaitSecond: 10,
    });
    expect(thin.preWarmSeconds).toBe(300);
    // Its own idle times (3 hours apart) outweigh the prior once there are enough of them.
    const own = histogramOf(Array.from({ length: 30 }, () => 3 * 3600 + 10));
    const grown = costOptimalWindows({
      histogram: own,
      prior: pooled,
      bestNonWarmSeconds: 60,
      gpusPerReplica: 1,
      gpuSecondsPerWaitSecond: 10,
    });
    expect(grown).toMatchObject({ preWarmSeconds: 3 * 3600, keepAliveSeconds: 60 });
  });

  it("reports the cost of the windows it chose, as the plain reference computes it", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const w = costOptimalWindows(input);
        const ref = referenceCost(input, w.preWarmSeconds, w.keepAliveSeconds);
        expect(w.expectedWaitSeconds).toBeCloseTo(ref.wait, 6);
        expect(w.expectedIdleGpuSeconds).toBeCloseTo(ref.idle, 4);
      }),
      { numRuns: 200 },
    );
  });

  it("is never beaten by keeping from the start for any whole number of minutes", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const w = costOptimalWindows(input);
        const price = input.gpuSecondsPerWaitSecond;
        for (let k = 0; k <= HISTOGRAM_BINS; k += 7) {
          const other = referenceCost(input, 0, k * HISTOGRAM_BIN_SECONDS);
          expect(w.expectedCost).toBeLessThanOrEqual(price * other.wait + other.idle + 1e-6);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("never plans less idle GPU time nor more wait at a higher price", () => {
    fc.assert(
      fc.property(inputs, fc.double({ min: 0, max: 1_000, noNaN: true }), (input, otherPrice) => {
        const [low, high] = [input.gpuSecondsPerWaitSecond, otherPrice].sort((a, b) => a - b);
        const cheap = costOptimalWindows({ ...input, gpuSecondsPerWaitSecond: low! });
        const dear = costOptimalWindows({ ...input, gpuSecondsPerWaitSecond: high! });
        expect(dear.expectedIdleGpuSeconds).toBeGreaterThanOrEqual(
          cheap.expectedIdleGpuSeconds - 1e-6,
        );
        expect(dear.expectedWaitSeconds).toBeLessThanOrEqual(cheap.expectedWaitSeconds + 1e-6);
      }),
      { numRuns: 300 },
    );
  });

  it("with no price: never more expected idle than the budget's keep-alive, and no keep-alive within it waits less", () => {
    fc.assert(
      fc.property(inputs, fc.integer({ min: 0, max: 3_600 }), (input, budgetK) => {
        const w = costOptimalWindows({
          ...input,
          gpuSecondsPerWaitSecond: null,
          idleBudgetKeepAliveSeconds: budgetK,
        });
        // What keeping for the budget's keep-alive would cost, on the same bins.
        const k = Math.floor(budgetK / HISTOGRAM_BIN_SECONDS) * HISTOGRAM_BIN_SECONDS;
        const budget = referenceCost(input, 0, k);
        expect(w.expectedIdleGpuSeconds).toBeLessThanOrEqual(budget.idle + 1e-6);
        for (let m = 0; m * HISTOGRAM_BIN_SECONDS <= k; m += 3) {
          const other = referenceCost(input, 0, m * HISTOGRAM_BIN_SECONDS);
          expect(w.expectedWaitSeconds).toBeLessThanOrEqual(other.wait + 1e-6);
        }
      }),
      { numRuns: 200 },
    );
  });
});
