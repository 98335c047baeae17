import { describe, expect, it } from "vitest";
import {
  coldStartLine,
  isClosed,
  phaseBars,
  whyLine,
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
  actualSeconds: null,
  status: "running",
  trigger: "scale_up",
  explored: false,
  explanation: "lazy beats pull by 31 s: prefetch overlaps the image fetch",
  error: null,
  failedPhase: null,
  requestedAt: "2026-11-24T00:00:00.000Z",
  options: [
    { path: "lazy", predictedSeconds: 40, chosen: true },
    { path: "pull", predictedSeconds: 71, chosen: false },
  ],
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
    expect(phaseBars(start())).toBe(`prefetch ${"█".repeat(20)} 20.0s | create ▒ …`);
  });

  it("shows predicted beside actual, and the outcome", () => {
    expect(coldStartLine(start())).toContain("predicted 40.0s, actual 20.0s so far  … running");
    const done = start({ status: "succeeded", actualSeconds: 38.2 });
    expect(isClosed(done)).toBe(true);
    expect(coldStartLine(done)).toMatch(/actual 38\.2s {2}✓ ready$/);
    const failed = start({ status: "failed", failedPhase: "create", error: "image_refused" });
    expect(coldStartLine(failed)).toMatch(/✗ failed in create: image_refused$/);
  });

  it("says why the path won and what it beat", () => {
    expect(whyLine(start())).toBe(
      "  lazy chosen: lazy beats pull by 31 s: prefetch overlaps the image fetch (next best: pull at 71.0s)",
    );
  });
});
