import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  autoscaleFromSignal,
  INITIAL_AUTOSCALER_STATE,
  KPA_DEFAULTS,
  type AutoscaleSettings,
  type AutoscalerState,
} from "./autoscale-from-signal";

const settings: AutoscaleSettings = {
  ...KPA_DEFAULTS,
  targetConcurrencyPerReplica: 10,
  minReplicas: 0,
  maxReplicas: 20,
  scaleToZeroIdleSeconds: 300,
};

/** Feeds one signal per second; returns the last decision. */
function replay(signals: number[], startReplicas: number, s = settings, startAt = 0) {
  let state: AutoscalerState = INITIAL_AUTOSCALER_STATE;
  let replicas = startReplicas;
  let last = autoscaleFromSignal({
    nowSeconds: startAt,
    observedConcurrency: 0,
    currentReplicas: replicas,
    settings: s,
    state,
  });
  signals.forEach((concurrency, i) => {
    last = autoscaleFromSignal({
      nowSeconds: startAt + i + 1,
      observedConcurrency: concurrency,
      currentReplicas: replicas,
      settings: s,
      state,
    });
    state = last.state;
    replicas = last.desiredReplicas;
  });
  return last;
}

describe("autoscaleFromSignal", () => {
  it("scales to the stable average over the target concurrency", () => {
    const decision = replay(
      Array.from({ length: 120 }, () => 35),
      4,
    );
    expect(decision.mode).toBe("stable");
    expect(decision.desiredReplicas).toBe(4);
  });

  it("panics on a burst and scales up at once", () => {
    const decision = replay(
      [...Array.from({ length: 60 }, () => 10), ...Array.from({ length: 6 }, () => 100)],
      1,
    );
    expect(decision.mode).toBe("panic");
    expect(decision.desiredReplicas).toBe(10);
  });

  it("never scales down while panicking", () => {
    const burst = [
      ...Array.from({ length: 60 }, () => 10),
      ...Array.from({ length: 6 }, () => 100),
    ];
    const afterBurst = replay([...burst, ...Array.from({ length: 10 }, () => 0)], 1);
    expect(afterBurst.mode).toBe("panic");
    expect(afterBurst.desiredReplicas).toBe(10);
  });

  it("keeps one replica while idle for less than the scale-to-zero delay, then none", () => {
    const load = Array.from({ length: 30 }, () => 5);
    expect(replay([...load, ...Array.from({ length: 120 }, () => 0)], 1).desiredReplicas).toBe(1);
    expect(replay([...load, ...Array.from({ length: 400 }, () => 0)], 1).desiredReplicas).toBe(0);
  });

  it("wakes from zero on the first waiting request", () => {
    const decision = autoscaleFromSignal({
      nowSeconds: 1000,
      observedConcurrency: 1,
      currentReplicas: 0,
      settings,
      state: INITIAL_AUTOSCALER_STATE,
    });
    expect(decision.desiredReplicas).toBe(1);
  });

  it("property: the result is always within [min, max], 0 only when min is 0", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1000, noNaN: true }), { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 30 }),
        fc.double({ min: 0.5, max: 100, noNaN: true }),
        (signals, min, span, start, target) => {
          const s = {
            ...settings,
            minReplicas: min,
            maxReplicas: min + span,
            targetConcurrencyPerReplica: target,
          };
          let state = INITIAL_AUTOSCALER_STATE;
          let replicas = start;
          signals.forEach((concurrency, i) => {
            const d = autoscaleFromSignal({
              nowSeconds: i * 2,
              observedConcurrency: concurrency,
              currentReplicas: replicas,
              settings: s,
              state,
            });
            expect(d.desiredReplicas).toBeGreaterThanOrEqual(min);
            expect(d.desiredReplicas).toBeLessThanOrEqual(min + span);
            expect(Number.isInteger(d.desiredReplicas)).toBe(true);
            state = d.state;
            replicas = d.desiredReplicas;
          });
        },
      ),
    );
  });
});
