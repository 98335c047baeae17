import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { physicsPriorSeconds, predictTimeToReady } from "./predict-time-to-ready";
import { deployment, makeNode, makeSnapshot } from "./test-fixtures";
import { EMPTY_HISTORY_CELL, updateHistoryStat, type HistoryCell } from "./update-history-stat";

const cellOf = (seconds: number[]): HistoryCell =>
  seconds.reduce((cell, s) => updateHistoryStat(cell, s), EMPTY_HISTORY_CELL);

describe("physicsPriorSeconds", () => {
  const host = makeNode().host;
  const prior = (
    path: "warm" | "restore" | "lazy" | "pull",
    locality: Parameters<typeof physicsPriorSeconds>[0]["locality"],
  ) => physicsPriorSeconds({ host, deployment, path, locality, snapshot: makeSnapshot() });

  it("orders the paths as the physics says: warm < local restore < remote restore < cold pull", () => {
    const warm = prior("warm", "warm-replica");
    const local = prior("restore", "snapshot-local");
    const remote = prior("restore", "snapshot-store");
    const pull = prior("pull", "cold");
    expect(warm).toBeLessThan(local);
    expect(local).toBeLessThan(remote);
    expect(remote).toBeLessThan(pull);
  });

  it("prices a staged restore on a host whose engines use a GPU Memory Service below the same restore elsewhere", () => {
    const fast = { ...host, diskReadMiBps: 1_000, diskWriteMiBps: 1_000 };
    const staged = (gpuMemoryService: boolean) =>
      physicsPriorSeconds({
        host: { ...fast, gpuMemoryService },
        deployment,
        path: "restore",
        locality: "snapshot-local",
        snapshot: makeSnapshot({ sleepLevel: 2 }),
        stageWeights: true,
      });
    expect(staged(true)).toBeLessThan(staged(false));
  });

  it("makes a cached image cheaper than a cold pull", () => {
    expect(prior("pull", "image-cached")).toBeLessThan(prior("pull", "cold"));
  });
});

describe("predictTimeToReady", () => {
  it("is the prior, with the prior's spread, when there is no history", () => {
    const p = predictTimeToReady({ priorSeconds: 60, history: {} });
    expect(Math.exp(p.meanLog)).toBeCloseTo(60, 9);
    expect(p.samples).toBe(0);
    expect(p.p90Seconds).toBeGreaterThan(p.meanSeconds);
  });

  it("brackets the next start with p10 and p90, symmetric around the median in log space", () => {
    for (const history of [
      {},
      { deployment: cellOf(Array.from({ length: 40 }, (_, i) => 30 + (i % 7))) },
    ]) {
      const p = predictTimeToReady({ priorSeconds: 60, history });
      const median = Math.exp(p.meanLog);
      expect(p.p10Seconds).toBeLessThan(median);
      expect(p.p90Seconds).toBeGreaterThan(median);
      // exp(m ∓ z·σ): the two ends multiply to the median squared.
      expect(p.p10Seconds * p.p90Seconds).toBeCloseTo(median ** 2, 6);
      expect(Math.log(p.p90Seconds / p.p10Seconds)).toBeCloseTo(
        2 * 1.2815515655446004 * Math.sqrt(p.predictiveLogVariance),
        9,
      );
    }
  });

  it("follows the deployment's own measurements once it has many", () => {
    const p = predictTimeToReady({
      priorSeconds: 60,
      history: { deployment: cellOf(Array.from({ length: 200 }, (_, i) => 9 + (i % 3))) },
    });
    expect(p.meanSeconds).toBeGreaterThan(9);
    expect(p.meanSeconds).toBeLessThan(11.5);
    expect(p.samples).toBe(200);
  });

  it("borrows from the endpoint and fleet levels when the deployment is new", () => {
    const fleetOnly = predictTimeToReady({
      priorSeconds: 60,
      history: { fleet: cellOf(Array.from({ length: 50 }, () => 20)) },
    });
    expect(Math.exp(fleetOnly.meanLog)).toBeLessThan(25);
    expect(fleetOnly.samples).toBe(0);
  });

  it("property: predictions are positive and finite", () => {
    const seconds = fc.array(fc.double({ min: 0, max: 1e5, noNaN: true }), { maxLength: 30 });
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1e5, noNaN: true }),
        seconds,
        seconds,
        seconds,
        (prior, d, e, f) => {
          const p = predictTimeToReady({
            priorSeconds: prior,
            history: { deployment: cellOf(d), endpoint: cellOf(e), fleet: cellOf(f) },
          });
          for (const value of [p.meanSeconds, p.p10Seconds, p.p90Seconds, p.meanLogVariance]) {
            expect(Number.isFinite(value)).toBe(true);
            expect(value).toBeGreaterThan(0);
          }
        },
      ),
    );
  });

  it("property: shrinkage moves toward the observed data as samples grow", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.5, max: 5000, noNaN: true }),
        fc.double({ min: 0.5, max: 5000, noNaN: true }),
        fc.integer({ min: 0, max: 50 }),
        fc.constantFrom("deployment", "endpoint", "fleet"),
        (prior, observed, n, scope) => {
          const distance = (samples: number) => {
            const cell = cellOf(Array.from({ length: samples }, () => observed));
            const p = predictTimeToReady({ priorSeconds: prior, history: { [scope]: cell } });
            return Math.abs(p.meanLog - Math.log(observed));
          };
          expect(distance(n + 1)).toBeLessThanOrEqual(distance(n) + 1e-9);
        },
      ),
    );
  });
});
