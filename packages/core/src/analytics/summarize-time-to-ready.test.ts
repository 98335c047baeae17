import { describe, expect, it } from "vitest";
import { sampleStart } from "./sample-fixtures.ts";
import { summarizeTimeToReady } from "./summarize-time-to-ready.ts";

describe("summarizeTimeToReady", () => {
  it("p50 / p95 over succeeded starts, path mix over all, the latest request", () => {
    const starts = [
      ...[4, 8, 12, 100].map((actual, i) =>
        sampleStart({ at: 1_000 + i, path: "restore", actual }),
      ),
      sampleStart({ at: 9_000, path: "pull", status: "failed" }),
      sampleStart({ at: 5_000, path: "warm", status: "running" }),
    ];
    const summary = summarizeTimeToReady(starts);
    expect(summary.p95Seconds).toBeCloseTo(12 + 0.85 * 88); // rank 0.95 × 3 = 2.85
    expect(summary).toEqual({
      samples: 4,
      p50Seconds: 10,
      p95Seconds: summary.p95Seconds,
      pathMix: { warm: 1, wake: 0, restore: 4, peer: 0, lazy: 0, pull: 1 },
      lastColdStartAt: new Date(9_000),
    });
  });

  it("no starts: no figures", () => {
    expect(summarizeTimeToReady([])).toEqual({
      samples: 0,
      p50Seconds: null,
      p95Seconds: null,
      pathMix: { warm: 0, wake: 0, restore: 0, peer: 0, lazy: 0, pull: 0 },
      lastColdStartAt: null,
    });
  });
});
