import { describe, expect, it } from "vitest";
import {
  EMPTY_HISTORY_CELL,
  historyCellKeys,
  historyCellVariance,
  modelSizeBucket,
  predictionLogError,
  updateHistoryStat,
} from "./update-history-stat";

describe("updateHistoryStat", () => {
  it("keeps the mean and variance of log-seconds (Welford)", () => {
    const observed = [10, 20, 40, 5];
    const cell = observed.reduce((c, s) => updateHistoryStat(c, s), EMPTY_HISTORY_CELL);
    const logs = observed.map(Math.log);
    const mean = logs.reduce((a, b) => a + b) / logs.length;
    const variance = logs.reduce((a, b) => a + (b - mean) ** 2, 0) / (logs.length - 1);
    expect(cell.samples).toBe(4);
    expect(cell.meanLog).toBeCloseTo(mean, 12);
    expect(historyCellVariance(cell)).toBeCloseTo(variance, 12);
  });

  it("advances the mean absolute log-error when the start had a prediction", () => {
    const once = updateHistoryStat(EMPTY_HISTORY_CELL, 20, 10);
    expect(once.predictionErrorLog).toBeCloseTo(Math.log(2), 12);
    const twice = updateHistoryStat(once, 10, 10);
    expect(twice.predictionErrorLog).toBeCloseTo(Math.log(2) / 2, 12);
  });

  it("clamps a zero duration instead of producing -Infinity", () => {
    expect(Number.isFinite(updateHistoryStat(EMPTY_HISTORY_CELL, 0).meanLog)).toBe(true);
  });

  it("measures the prediction error as ln(actual / predicted)", () => {
    expect(predictionLogError(10, 20)).toBeCloseTo(Math.log(2), 12);
    expect(predictionLogError(20, 10)).toBeCloseTo(-Math.log(2), 12);
  });

  it("names the three cells a start updates, finest first", () => {
    const keys = historyCellKeys({
      deploymentId: "d",
      endpointId: "e",
      modelBytes: 16e9,
      path: "pull",
      locality: "cold",
    });
    expect(keys.map((k) => [k.scope, k.scopeKey])).toEqual([
      ["deployment", "d"],
      ["endpoint", "e"],
      ["fleet", "le-32GB"],
    ]);
    expect(modelSizeBucket(1e9)).toBe("le-2GB");
    expect(modelSizeBucket(500e9)).toBe("gt-128GB");
  });
});
