import { describe, expect, it } from "vitest";
import type { BottleneckHint } from "../analytics/bottleneck-hints.ts";
import { slowStartFinding } from "./slow-start-finding.ts";

const hint = (
  phase: BottleneckHint["phase"],
  attributedSeconds: number,
  text: string,
): BottleneckHint => ({
  phase,
  bound: "disk_read",
  phaseSeconds: 100,
  attributedSeconds,
  unit: "bytes_per_second",
  measured: 1,
  ceiling: 1,
  text,
});

describe("slowStartFinding", () => {
  it("names the slowest phase by the hint that accounts for most of it", () => {
    const finding = slowStartFinding({
      path: "pull",
      actualSeconds: 212,
      predictedP90Seconds: 120,
      phases: [
        { phase: "pull", seconds: 40 },
        { phase: "load_weights", seconds: 150 },
        { phase: "ready", seconds: 999 },
      ],
      hints: [
        hint("pull", 39, "pull is network bound"),
        hint("load_weights", 20, "load_weights is latency bound"),
        hint(
          "load_weights",
          120,
          "load_weights is disk-read bound at 125 MiB/s — provision gp3 throughput",
        ),
      ],
    });
    expect(finding.slowestPhase).toEqual({ phase: "load_weights", seconds: 150 });
    expect(finding.summary).toBe(
      "pull start took 212.0 s against a predicted p90 of 120.0 s; load_weights is disk-read bound at 125 MiB/s — provision gp3 throughput",
    );
  });

  it("still names the phase when no hint bounds it", () => {
    const finding = slowStartFinding({
      path: "restore",
      actualSeconds: 30,
      predictedP90Seconds: 10,
      phases: [{ phase: "restore", seconds: 25 }],
      hints: [],
    });
    expect(finding.hint).toBeNull();
    expect(finding.summary).toContain("slowest phase restore (25.0 s), no bound named");
  });
});
