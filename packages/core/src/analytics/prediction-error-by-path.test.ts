import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StartPath } from "../vocabulary/index.ts";
import { predictionErrorByPath } from "./prediction-error-by-path.ts";
import { sampleStart } from "./sample-fixtures.ts";

describe("predictionErrorByPath", () => {
  it("mean absolute error, bias, median percent error and log error per path", () => {
    const rows = predictionErrorByPath([
      sampleStart({ at: 1, path: "pull", predicted: 100, actual: 120 }),
      sampleStart({ at: 2, path: "pull", predicted: 100, actual: 90 }),
      sampleStart({ at: 3, path: "restore", predicted: 5, actual: 5 }),
      sampleStart({ at: 4, path: "pull", status: "failed", predicted: 1, actual: null }),
    ]);
    expect(rows.map((r) => r.path)).toEqual(["restore", "pull"]);
    const pull = rows[1]!;
    expect(pull.samples).toBe(2);
    expect(pull.meanAbsoluteErrorSeconds).toBe(15);
    expect(pull.biasSeconds).toBe(5);
    expect(pull.medianAbsolutePercentError).toBeCloseTo((20 / 120 + 10 / 90) / 2);
    expect(pull.meanAbsoluteLogError).toBeCloseTo((Math.log(1.2) + Math.log(100 / 90)) / 2);
    expect(rows[0]).toMatchObject({
      meanAbsoluteErrorSeconds: 0,
      biasSeconds: 0,
      meanAbsoluteLogError: 0,
    });
  });

  it("|bias| never exceeds the mean absolute error, and samples add up to the succeeded starts", () => {
    const start = fc.record({
      path: fc.constantFrom(...StartPath.options),
      predicted: fc.double({ min: 0.01, max: 1e4, noNaN: true }),
      actual: fc.double({ min: 0.01, max: 1e4, noNaN: true }),
    });
    fc.assert(
      fc.property(fc.array(start, { maxLength: 40 }), (starts) => {
        const rows = predictionErrorByPath(starts.map((s, i) => sampleStart({ at: i, ...s })));
        expect(rows.reduce((n, r) => n + r.samples, 0)).toBe(starts.length);
        for (const r of rows) {
          expect(Math.abs(r.biasSeconds)).toBeLessThanOrEqual(
            r.meanAbsoluteErrorSeconds * (1 + 1e-9) + 1e-9,
          );
          expect(r.meanAbsoluteLogError).toBeGreaterThanOrEqual(0);
        }
      }),
    );
  });
});
