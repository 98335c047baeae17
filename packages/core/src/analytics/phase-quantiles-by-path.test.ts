import { describe, expect, it } from "vitest";
import { phaseQuantilesByPath } from "./phase-quantiles-by-path.ts";
import { sampleStart } from "./sample-fixtures.ts";

describe("phaseQuantilesByPath", () => {
  it("p50 / p95 per path and phase over succeeded starts only, in path then phase order", () => {
    const pulls = [10, 20, 30, 40, 50].map((s, i) =>
      sampleStart({
        at: i,
        path: "pull",
        phases: [
          ["pull", s],
          ["create", 1],
        ],
      }),
    );
    const restore = sampleStart({ at: 9, path: "restore", phases: [["restore", 3]] });
    const failed = sampleStart({ at: 10, path: "pull", status: "failed", phases: [["pull", 999]] });
    const rows = phaseQuantilesByPath([...pulls, restore, failed]);
    expect(rows.map((r) => `${r.path}:${r.phase}`)).toEqual([
      "restore:restore",
      "pull:pull",
      "pull:create",
    ]);
    expect(rows.find((r) => r.phase === "pull")).toEqual({
      path: "pull",
      phase: "pull",
      samples: 5,
      p50Seconds: 30,
      p95Seconds: 48,
    });
    expect(rows.find((r) => r.phase === "restore")).toMatchObject({
      samples: 1,
      p50Seconds: 3,
      p95Seconds: 3,
    });
  });

  it("has no rows without succeeded starts", () => {
    expect(
      phaseQuantilesByPath([sampleStart({ at: 0, status: "running", phases: [["pull", 4]] })]),
    ).toEqual([]);
  });
});
