import { describe, expect, it } from "vitest";
import { coldStartBreakdown } from "./cold-start-breakdown.ts";
import { sampleStart } from "./sample-fixtures.ts";

const GP3_G6E = {
  vcpus: 4,
  networkGbps: 20,
  diskWriteMiBps: 125,
  diskReadMiBps: 125,
  pcieGBps: 25,
};

describe("coldStartBreakdown", () => {
  it("composes the figures and reads the hints from the latest succeeded start of each path", () => {
    const older = sampleStart({
      at: 1_000,
      path: "pull",
      phases: [
        ["pull", 400],
        ["compile", 1],
      ],
    });
    const latest = {
      ...sampleStart({ at: 2_000, path: "pull", predicted: 300, actual: 420 }),
      host: GP3_G6E,
      phases: [
        {
          phase: "pull" as const,
          seconds: 400,
          bytes: 12.9e9,
          throughputBps: 12.9e9 / 400,
          attributes: {},
        },
        { phase: "create" as const, seconds: 1, bytes: 0, throughputBps: 0, attributes: {} },
      ],
    };
    const failed = sampleStart({
      at: 3_000,
      path: "restore",
      status: "failed",
      phases: [["restore", 2]],
    });
    const breakdown = coldStartBreakdown([latest, failed, older], {
      imageLayers: [
        { bytes: 12e9, compression: "gzip-9", content: "weights" },
        { bytes: 0.9e9, compression: "gzip-9", content: "code" },
      ],
      engineProfile: { loader: "sequential", loaderConcurrency: 1 },
    });
    expect(breakdown.starts.map((s) => s.id)).toEqual([older.id, latest.id, failed.id]);
    expect(breakdown.summary.samples).toBe(2);
    expect(breakdown.predictedVsActual).toHaveLength(2);
    expect(breakdown.predictionError.map((r) => r.path)).toEqual(["pull"]);
    expect(breakdown.bottlenecks).toHaveLength(1);
    expect(breakdown.bottlenecks[0]).toMatchObject({ path: "pull", coldStartId: latest.id });
    expect(breakdown.bottlenecks[0]!.hints.map((h) => h.bound)).toContain("disk_write");
  });
});
