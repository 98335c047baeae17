import { describe, expect, it } from "vitest";
import {
  coldStartLine,
  isClosed,
  phaseBars,
  weighedOptions,
  whyLines,
  type ColdStartDetail,
} from "./cold-start-line.ts";

const start = (over: Partial<ColdStartDetail> = {}): ColdStartDetail => ({
  id: "0193aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee",
  attempt: 1,
  endpoint: { slug: "qwen-7b", name: "Qwen" },
  node: null,
  path: "lazy",
  locality: "cold",
  predictedSeconds: 40,
  predictedMeanSeconds: null,
  predictedP10Seconds: null,
  predictedP90Seconds: null,
  actualSeconds: null,
  status: "running",
  trigger: "scale_up",
  explored: false,
  explanation: "lazy beats pull by 31 s: prefetch overlaps the image fetch",
  error: null,
  failedPhase: null,
  requestedAt: "2026-11-24T00:00:00.000Z",
  // As core's optionsRecord stores it.
  options: {
    feasible: [
      { nodeName: "g6e-1", path: "lazy", chosen: true, predictedSeconds: 40, lostBecause: null },
      { nodeName: "g6e-2", path: "lazy", chosen: false, predictedSeconds: 41, lostBecause: "x" },
      {
        nodeName: "g6e-2",
        path: "pull",
        chosen: false,
        predictedSeconds: 78,
        lostBecause: "slower by 38 s",
      },
      {
        nodeName: "g6e-1",
        path: "pull",
        chosen: false,
        predictedSeconds: 71,
        lostBecause: "slower by 31 s",
      },
    ],
    feasibleCount: 4,
    infeasible: [
      { path: "restore", reason: "no snapshot of this deployment", nodes: 2 },
      { path: "warm", reason: "no idle warm replica", nodes: 1 },
      { path: "warm", reason: "node busy", nodes: 1 },
      { path: "pull", reason: "no free GPU", nodes: 3 },
    ],
  },
  phases: [
    {
      sequence: 1,
      phase: "prefetch",
      startedAt: "",
      seconds: 20,
      bytes: null,
      throughputBps: null,
    },
    {
      sequence: 2,
      phase: "create",
      startedAt: "",
      seconds: null,
      bytes: null,
      throughputBps: null,
    },
  ],
  ...over,
});

describe("cold-start line", () => {
  it("draws a bar per phase, scaled to the start, an open phase as a shade", () => {
    expect(phaseBars(start())).toBe(`prefetch ${"█".repeat(15)} 20.0s | create ▒ …`);
  });

  it("shows the predicted mean and p10–p90 interval where the start kept them", () => {
    const p90Endpoint = start({
      predictedSeconds: 55.2,
      predictedMeanSeconds: 40,
      predictedP10Seconds: 30.14,
      predictedP90Seconds: 55.2,
    });
    expect(coldStartLine(p90Endpoint)).toContain(
      "predicted 40.0s (p10–p90 30.1–55.2s), actual 20.0s so far",
    );
  });

  it("shows predicted beside actual, and the outcome", () => {
    expect(coldStartLine(start())).toContain("… running  predicted 40.0s, actual 20.0s so far");
    const done = start({ status: "succeeded", actualSeconds: 38.2 });
    expect(isClosed(done)).toBe(true);
    expect(coldStartLine(done)).toMatch(/✓ ready {2}predicted 40\.0s, actual 38\.2s {2}prefetch/);
    const failed = start({ status: "failed", failedPhase: "create", error: "image_refused" });
    expect(coldStartLine(failed)).toMatch(/ ✗ failed in create: image_refused {2}predicted/);
  });

  it("says why the path won, each other path's best option and why no node could take the rest", () => {
    expect(weighedOptions(start())).toEqual([
      "pull 71.0s on g6e-1 (slower by 31 s)",
      "restore ✗ no snapshot of this deployment (2 nodes)",
      "warm ✗ no idle warm replica (1 node); node busy (1 node)",
    ]);
    expect(whyLines(start({ explored: true }))).toEqual([
      "  why lazy (exploring): lazy beats pull by 31 s: prefetch overlaps the image fetch",
      "  weighed: pull 71.0s on g6e-1 (slower by 31 s) · restore ✗ no snapshot of this deployment (2 nodes) · warm ✗ no idle warm replica (1 node); node busy (1 node)",
    ]);
  });

  it("reads an options record it does not know as nothing weighed, never a crash", () => {
    expect(weighedOptions(start({ options: {} }))).toEqual([]);
    expect(weighedOptions(start({ options: [{ path: "pull" }] }))).toEqual([]);
    expect(whyLines(start({ options: ["garbage"], explanation: " " }))).toEqual([
      "  why lazy: the fastest option",
    ]);
  });

  it("puts the attempt, outcome and times before the bars (a narrow terminal cuts the end)", () => {
    expect(coldStartLine(start({ attempt: 2 }))).toMatch(
      /^qwen-7b 0193aaaa lazy \(attempt 2\) {2}… running {2}predicted 40\.0s, actual 20\.0s so far {2}prefetch █+ 20\.0s \| create ▒ …$/,
    );
  });
});
