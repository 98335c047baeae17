import { describe, expect, it } from "vitest";
import { predictedVsActual } from "./predicted-vs-actual.ts";
import { sampleStart } from "./sample-fixtures.ts";

describe("predictedVsActual", () => {
  it("pairs each succeeded start's prediction with its time to ready, oldest first", () => {
    const b = sampleStart({ at: 2, path: "lazy", predicted: 40, actual: 55 });
    const a = sampleStart({ at: 1, path: "warm", predicted: 2, actual: 1.5 });
    const running = sampleStart({ at: 3, status: "running", predicted: 9, actual: null });
    const failed = sampleStart({ at: 4, status: "failed", predicted: 9, actual: null });
    expect(predictedVsActual([b, running, a, failed])).toEqual([
      {
        id: a.id,
        requestedAt: a.requestedAt,
        path: "warm",
        predictedSeconds: 2,
        actualSeconds: 1.5,
        errorSeconds: -0.5,
      },
      {
        id: b.id,
        requestedAt: b.requestedAt,
        path: "lazy",
        predictedSeconds: 40,
        actualSeconds: 55,
        errorSeconds: 15,
      },
    ]);
  });
});
