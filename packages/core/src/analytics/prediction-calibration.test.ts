import { describe, expect, it } from "vitest";
import { predictionCalibration, type CalibrationStart } from "./prediction-calibration.ts";

const start = (
  actualSeconds: number | null,
  p10: number | null = 10,
  p90: number | null = 20,
  status = "succeeded",
): CalibrationStart => ({
  status,
  actualSeconds,
  predictedP10Seconds: p10,
  predictedP90Seconds: p90,
});
const repeat = (n: number, s: CalibrationStart) => Array.from({ length: n }, () => s);

describe("predictionCalibration", () => {
  it("counts a start inside its interval, ends included, and one faster or slower than it", () => {
    expect(
      predictionCalibration([start(10), start(15), start(20), start(9.9), start(20.1)]),
    ).toEqual({
      starts: 5,
      inside: 3,
      faster: 1,
      slower: 1,
      insideShare: 0.6,
      verdict: "too-few-starts",
    });
  });

  it("rests only on succeeded starts that have an actual time and a stored interval", () => {
    const result = predictionCalibration([
      start(15),
      start(15, null, null),
      start(15, 10, null),
      start(null),
      start(15, 10, 20, "failed"),
      start(15, 10, 20, "running"),
    ]);
    expect(result.starts).toBe(1);
    expect(result.insideShare).toBe(1);
  });

  it("says nothing with no starts", () => {
    expect(predictionCalibration([])).toEqual({
      starts: 0,
      inside: 0,
      faster: 0,
      slower: 0,
      insideShare: null,
      verdict: "no-starts",
    });
  });

  it("is calibrated at 80% ± 5% once it rests on 20 starts", () => {
    const of = (inside: number, outside: number) =>
      predictionCalibration([...repeat(inside, start(15)), ...repeat(outside, start(30))]);
    expect(of(16, 4)).toMatchObject({ insideShare: 0.8, verdict: "calibrated" });
    expect(of(15, 5)).toMatchObject({ insideShare: 0.75, verdict: "calibrated" });
    expect(of(17, 3)).toMatchObject({ insideShare: 0.85, verdict: "calibrated" });
    expect(of(14, 6)).toMatchObject({ insideShare: 0.7, verdict: "too-narrow" });
    expect(of(18, 2)).toMatchObject({ insideShare: 0.9, verdict: "too-wide" });
    expect(of(15, 4)).toMatchObject({ starts: 19, verdict: "too-few-starts" });
  });
});
