import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  emptyIdleTimeHistogram,
  emptyIdleTracker,
  idleForSeconds,
  keepAliveWindows,
  observeCapacity,
  CAPPED_HYBRID_SETTINGS,
  PAPER_HYBRID_SETTINGS,
  planWarmPool,
  recordIdleTime,
  warmPoolActions,
  type IdleTimeHistogram,
  type WarmPoolEndpointInput,
} from "./plan-warm-pool";

const histogramOf = (idleSeconds: number[]): IdleTimeHistogram =>
  idleSeconds.reduce(recordIdleTime, emptyIdleTimeHistogram());

/** Requests every ~30 minutes: a clear pattern. */
const periodic = histogramOf(Array.from({ length: 100 }, (_, i) => 30 * 60 + (i % 3) * 60));

const endpointInput = (overrides: Partial<WarmPoolEndpointInput> = {}): WarmPoolEndpointInput => ({
  endpointId: "e",
  histogram: periodic,
  idleForSeconds: 0,
  busyReplicas: 0,
  minReplicas: 0,
  maxReplicas: 4,
  gpusPerReplica: 1,
  bestNonWarmSeconds: 120,
  ...overrides,
});

describe("keepAliveWindows", () => {
  it("pre-warms just before a periodic request and keeps the replica briefly (the paper's windows)", () => {
    const w = keepAliveWindows({
      histogram: periodic,
      bestNonWarmSeconds: 120,
      settings: PAPER_HYBRID_SETTINGS,
    });
    expect(w.policy).toBe("histogram");
    expect(w.preWarmSeconds).toBeCloseTo(30 * 60 * 0.9, 6);
    expect(w.reWarmAtSeconds).toBeCloseTo(30 * 60 * 0.9 - 120, 6);
    expect(w.keepAliveSeconds).toBeCloseTo(33 * 60 * 1.1 - 30 * 60 * 0.9, 6);
  });

  it("falls back to the fixed keep-alive with too few samples or a flat histogram", () => {
    expect(
      keepAliveWindows({ histogram: histogramOf([600, 1200]), bestNonWarmSeconds: 120 }).policy,
    ).toBe("fixed-keep-alive");
    const flat = histogramOf(Array.from({ length: 240 }, (_, i) => i * 60 + 1));
    expect(
      keepAliveWindows({
        histogram: flat,
        bestNonWarmSeconds: 120,
        settings: PAPER_HYBRID_SETTINGS,
      }),
    ).toMatchObject({ policy: "fixed-keep-alive", keepAliveSeconds: 600 });
  });

  it("keeps a replica far less when a miss is cheap (3 s restore vs a 13 GB pull)", () => {
    const cheap = keepAliveWindows({ histogram: histogramOf([1]), bestNonWarmSeconds: 3 });
    const dear = keepAliveWindows({
      histogram: histogramOf([1]),
      bestNonWarmSeconds: 300,
      settings: PAPER_HYBRID_SETTINGS,
    });
    expect(cheap.keepAliveSeconds).toBeCloseTo(30, 6);
    expect(dear.keepAliveSeconds).toBe(600);
  });

  it("holds an idle replica no longer than one best non-warm start takes (ski rental), at least a minute", () => {
    // Same pre-warm point as the paper's; the hold after it is capped at the start's 120 s.
    const periodicCapped = keepAliveWindows({ histogram: periodic, bestNonWarmSeconds: 120 });
    expect(periodicCapped.preWarmSeconds).toBeCloseTo(30 * 60 * 0.9, 6);
    expect(periodicCapped.keepAliveSeconds).toBe(120);
    const flat = histogramOf(Array.from({ length: 240 }, (_, i) => i * 60 + 1));
    expect(keepAliveWindows({ histogram: flat, bestNonWarmSeconds: 300 }).keepAliveSeconds).toBe(
      300,
    );
    // A 40 s restore still gets a minute: the histogram's resolution.
    expect(
      keepAliveWindows({ histogram: histogramOf([1]), bestNonWarmSeconds: 40 }).keepAliveSeconds,
    ).toBe(60);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 20_000 }), { maxLength: 40 }),
        fc.double({ min: 0, max: 2_000, noNaN: true }),
        (idleTimes, best) => {
          const histogram = histogramOf(idleTimes);
          const capped = keepAliveWindows({ histogram, bestNonWarmSeconds: best });
          const paper = keepAliveWindows({
            histogram,
            bestNonWarmSeconds: best,
            settings: PAPER_HYBRID_SETTINGS,
          });
          expect(capped.keepAliveSeconds).toBeLessThanOrEqual(Math.max(60, best) + 1e-9);
          expect(capped.keepAliveSeconds).toBe(
            Math.min(paper.keepAliveSeconds, Math.max(60, best)),
          );
          expect(capped.preWarmSeconds).toBe(paper.preWarmSeconds);
        },
      ),
    );
  });
});

describe("planWarmPool", () => {
  it("holds a replica inside the window and releases it outside (hybrid windows, capped)", () => {
    const [inside] = planWarmPool({
      endpoints: [endpointInput({ idleForSeconds: 28 * 60 })],
      gpuBudget: 8,
      settings: CAPPED_HYBRID_SETTINGS,
    });
    const [released] = planWarmPool({
      endpoints: [endpointInput({ idleForSeconds: 5 * 60 })],
      gpuBudget: 8,
      settings: CAPPED_HYBRID_SETTINGS,
    });
    // Past the capped hold (pre-warm at 27 min + one 120 s start), released again.
    const [after] = planWarmPool({
      endpoints: [endpointInput({ idleForSeconds: 30 * 60 })],
      gpuBudget: 8,
      settings: CAPPED_HYBRID_SETTINGS,
    });
    expect(inside?.warmReplicas).toBe(1);
    expect(released?.warmReplicas).toBe(0);
    expect(after?.warmReplicas).toBe(0);
  });

  it("holds a replica inside the window and releases it outside (expected-cost windows, the default)", () => {
    const at = (idleForSeconds: number) =>
      planWarmPool({ endpoints: [endpointInput({ idleForSeconds })], gpuBudget: 8 })[0]!;
    // Requests come 30–32 minutes apart: released at once, re-warmed one start (120 s) before
    // 30 minutes, held until the last of them is due.
    expect(at(5 * 60).warmReplicas).toBe(0);
    expect(at(28 * 60).warmReplicas).toBe(1);
    expect(at(32 * 60).warmReplicas).toBe(1);
    expect(at(34 * 60).warmReplicas).toBe(0);
    expect(at(28 * 60).windows).toMatchObject({ policy: "expected-cost", preWarmSeconds: 1800 });
  });

  it("spends a scarce GPU budget on the endpoint whose miss costs most", () => {
    const plans = planWarmPool({
      endpoints: [
        endpointInput({
          endpointId: "restore-3s",
          bestNonWarmSeconds: 3,
          histogram: histogramOf([1]),
        }),
        endpointInput({
          endpointId: "pull-13GB",
          bestNonWarmSeconds: 300,
          histogram: histogramOf([1]),
        }),
      ],
      gpuBudget: 1,
    });
    expect(Object.fromEntries(plans.map((p) => [p.endpointId, p.warmReplicas]))).toEqual({
      "restore-3s": 0,
      "pull-13GB": 1,
    });
  });

  it("property: within min/max replicas and the GPU budget", () => {
    const endpointArb = fc.record({
      idleForSeconds: fc.integer({ min: 0, max: 20_000 }),
      busyReplicas: fc.integer({ min: 0, max: 6 }),
      minReplicas: fc.integer({ min: 0, max: 3 }),
      extraMax: fc.integer({ min: 0, max: 4 }),
      gpusPerReplica: fc.integer({ min: 1, max: 4 }),
      bestNonWarmSeconds: fc.double({ min: 0, max: 1000, noNaN: true }),
      idleTimes: fc.array(fc.integer({ min: 0, max: 20_000 }), { maxLength: 40 }),
    });
    fc.assert(
      fc.property(
        fc.array(endpointArb, { maxLength: 6 }),
        fc.integer({ min: 0, max: 10 }),
        (specs, budget) => {
          const endpoints = specs.map((s, i) =>
            endpointInput({
              endpointId: `e${i}`,
              histogram: histogramOf(s.idleTimes),
              idleForSeconds: s.idleForSeconds,
              busyReplicas: s.busyReplicas,
              minReplicas: s.minReplicas,
              maxReplicas: s.minReplicas + s.extraMax,
              gpusPerReplica: s.gpusPerReplica,
              bestNonWarmSeconds: s.bestNonWarmSeconds,
            }),
          );
          const plans = planWarmPool({ endpoints, gpuBudget: budget });
          let optionalGpus = 0;
          plans.forEach((plan, i) => {
            const e = endpoints[i]!;
            expect(plan.warmReplicas).toBeGreaterThanOrEqual(0);
            expect(plan.warmReplicas + e.busyReplicas).toBeLessThanOrEqual(
              Math.max(e.maxReplicas, e.busyReplicas),
            );
            const forced = Math.min(
              Math.max(0, e.maxReplicas - e.busyReplicas),
              Math.max(0, e.minReplicas - e.busyReplicas),
            );
            expect(plan.warmReplicas).toBeGreaterThanOrEqual(forced);
            optionalGpus += (plan.warmReplicas - forced) * e.gpusPerReplica;
            expect(Number.isFinite(plan.windows.keepAliveSeconds)).toBe(true);
          });
          expect(optionalGpus).toBeLessThanOrEqual(budget);
        },
      ),
    );
  });
});

describe("observeCapacity", () => {
  it("records the time from spare capacity to the next need as one idle time", () => {
    let t = emptyIdleTracker();
    t = observeCapacity(t, "needed", 0);
    expect(t.histogram.bins.reduce((a, b) => a + b, 0)).toBe(0);
    t = observeCapacity(t, "surplus", 1_000);
    t = observeCapacity(t, "surplus", 50_000); // a second scale-down: the idle period began earlier
    expect(idleForSeconds(t, 121_000)).toBe(120);
    t = observeCapacity(t, "needed", 181_000);
    expect(t.idleSinceMs).toBeNull();
    expect(t.histogram.bins[3]).toBe(1); // 180 s: the [3, 4) minute bin
    expect(idleForSeconds(t, 500_000)).toBe(0);
  });
});

describe("warmPoolActions", () => {
  const fixed = keepAliveWindows({ histogram: emptyIdleTimeHistogram(), bestNonWarmSeconds: 120 });
  const periodicWindows = keepAliveWindows({ histogram: periodic, bestNonWarmSeconds: 120 });

  it("parks surplus up to the plan, then stops the rest", () => {
    const actions = warmPoolActions({
      plan: { warmReplicas: 1, windows: fixed },
      idleForSeconds: 0,
      warm: [],
      incoming: 0,
      surplusReady: 3,
    });
    expect(actions).toEqual({ park: 1, release: [], prewarm: 0 });
  });

  it("releases the longest-parked replicas once the plan holds fewer", () => {
    const actions = warmPoolActions({
      plan: { warmReplicas: 0, windows: fixed },
      idleForSeconds: 700,
      warm: ["old", "new"],
      incoming: 0,
      surplusReady: 0,
    });
    expect(actions.release).toEqual(["old", "new"]);
    expect(
      warmPoolActions({
        plan: { warmReplicas: 1, windows: fixed },
        idleForSeconds: 10,
        warm: ["old", "new"],
        incoming: 0,
        surplusReady: 0,
      }).release,
    ).toEqual(["old"]);
  });

  it("pre-warms when the histogram says the next request is due, and not before", () => {
    const due = periodicWindows.reWarmAtSeconds + 1;
    expect(
      warmPoolActions({
        plan: { warmReplicas: 1, windows: periodicWindows },
        idleForSeconds: due,
        warm: [],
        incoming: 0,
        surplusReady: 0,
      }).prewarm,
    ).toBe(1);
    expect(
      warmPoolActions({
        plan: { warmReplicas: 1, windows: periodicWindows },
        idleForSeconds: due,
        warm: [],
        incoming: 1, // already on its way
        surplusReady: 0,
      }).prewarm,
    ).toBe(0);
    // The fixed keep-alive never pre-warms: it only keeps what it parked.
    expect(
      warmPoolActions({
        plan: { warmReplicas: 1, windows: fixed },
        idleForSeconds: 10,
        warm: [],
        incoming: 0,
        surplusReady: 0,
      }).prewarm,
    ).toBe(0);
  });

  it("property: the pool never outgrows the plan (so maxReplicas − busy and the budget), min honoured", () => {
    fc.assert(
      fc.property(
        fc.record({
          busy: fc.integer({ min: 0, max: 6 }),
          min: fc.integer({ min: 0, max: 3 }),
          extraMax: fc.integer({ min: 0, max: 4 }),
          gpus: fc.integer({ min: 1, max: 4 }),
          budget: fc.integer({ min: 0, max: 8 }),
          idle: fc.integer({ min: 0, max: 20_000 }),
          idleTimes: fc.array(fc.integer({ min: 0, max: 20_000 }), { maxLength: 40 }),
          warm: fc.integer({ min: 0, max: 5 }),
          incoming: fc.integer({ min: 0, max: 3 }),
          surplusReady: fc.integer({ min: 0, max: 5 }),
          miss: fc.double({ min: 0, max: 1000, noNaN: true }),
        }),
        (s) => {
          const endpoint = endpointInput({
            histogram: histogramOf(s.idleTimes),
            idleForSeconds: s.idle,
            busyReplicas: s.busy,
            minReplicas: s.min,
            maxReplicas: s.min + s.extraMax,
            gpusPerReplica: s.gpus,
            bestNonWarmSeconds: s.miss,
          });
          const [plan] = planWarmPool({ endpoints: [endpoint], gpuBudget: s.budget });
          const warm = Array.from({ length: s.warm }, (_, i) => `w${i}`);
          const a = warmPoolActions({
            plan: plan!,
            idleForSeconds: s.idle,
            warm,
            incoming: s.incoming,
            surplusReady: s.surplusReady,
          });
          const after = s.warm - a.release.length + s.incoming + a.park + a.prewarm;
          const room = Math.max(0, endpoint.maxReplicas - endpoint.busyReplicas);
          const forced = Math.min(room, Math.max(0, s.min - s.busy));
          // What it adds stays within the plan; what it cannot cancel (incoming) is all that may exceed it.
          expect(after).toBeLessThanOrEqual(Math.max(plan!.warmReplicas, s.incoming));
          if (a.park + a.prewarm > 0) {
            expect(after).toBeLessThanOrEqual(room);
            expect((after - forced) * s.gpus).toBeLessThanOrEqual(s.budget);
          }
          // Nothing is released below what minReplicas forces.
          expect(s.warm - a.release.length + s.incoming).toBeGreaterThanOrEqual(
            Math.min(forced, s.warm + s.incoming),
          );
          expect(a.park).toBeLessThanOrEqual(s.surplusReady);
          expect(new Set(a.release).size).toBe(a.release.length);
        },
      ),
    );
  });
});
