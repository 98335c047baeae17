import type { ClosedColdStartFacts } from "@thaw/core";
import { parsePrometheusText, sumObserved, sumSamples } from "@thaw/core/testing";
import { describe, expect, it } from "vitest";
import { SchedulerMetrics, type SchedulerMetricsSources } from "./scheduler-metrics.ts";

// The counters' labelling, without Redis or Postgres (render() reads those; these read the
// registry alone).

const closed = (endpointId: string, over: Partial<ClosedColdStartFacts> = {}) => ({
  endpointId,
  path: "restore" as const,
  status: "succeeded" as const,
  actualSeconds: 12,
  predictedMeanSeconds: 10,
  predictedP90Seconds: 11,
  phases: [
    { phase: "restore", seconds: 9 },
    { phase: "warmup", seconds: 3 },
  ],
  ...over,
});

const unused = {} as SchedulerMetricsSources;

describe("SchedulerMetrics", () => {
  it("labels cold starts by at most maxEndpoints endpoint ids; the rest share _other", async () => {
    const metrics = new SchedulerMetrics(unused, { maxEndpoints: 2 });
    for (const id of ["a", "b", "c", "d", "a"]) metrics.observeClosedColdStart(closed(id));
    const m = parsePrometheusText(await metrics.registry.metrics());
    const endpoints = new Set(
      m.get("thaw_cold_starts_total")!.samples.map((s) => s.labels.endpoint),
    );
    expect(endpoints).toEqual(new Set(["a", "b", "_other"]));
    expect(sumSamples(m, "thaw_cold_starts_total", { endpoint: "a" })).toBe(2);
    expect(sumSamples(m, "thaw_cold_starts_total", { endpoint: "_other" })).toBe(2);
  });

  it("counts a start slower than its p90, its phases, and a failure without a duration", async () => {
    const metrics = new SchedulerMetrics(unused, { maxEndpoints: 10 });
    metrics.observeClosedColdStart(closed("a")); // 12 s against a p90 of 11 s
    metrics.observeClosedColdStart(closed("a", { actualSeconds: 10.5 }));
    metrics.observeClosedColdStart(
      closed("a", {
        status: "failed",
        actualSeconds: null,
        phases: [{ phase: "restore", seconds: 2 }],
      }),
    );
    const m = parsePrometheusText(await metrics.registry.metrics());
    expect(sumSamples(m, "thaw_cold_starts_slower_than_p90_total", { path: "restore" })).toBe(1);
    expect(sumSamples(m, "thaw_cold_start_duration_seconds")).toBe(2);
    expect(sumSamples(m, "thaw_cold_start_phase_duration_seconds", { phase: "restore" })).toBe(3);
    expect(sumSamples(m, "thaw_cold_starts_total", { outcome: "failed" })).toBe(1);
    expect(sumObserved(m, "thaw_prediction_ratio", { path: "restore" })).toBeCloseTo(1.2 + 1.05, 9);
  });

  it("labels decisions by path, locality and whether the start was explored", async () => {
    const metrics = new SchedulerMetrics(unused, { maxEndpoints: 10 });
    const placed = (explored: boolean) => ({
      replicaId: "r",
      coldStartId: "c",
      path: "lazy" as const,
      locality: "cold",
      explored,
    });
    metrics.observePlacement({ kind: "placed", placed: [placed(false), placed(true)] });
    metrics.observePlacement({ kind: "unplaceable", placed: [] });
    const m = parsePrometheusText(await metrics.registry.metrics());
    expect(sumSamples(m, "thaw_placement_decisions_total", { reason: "explored" })).toBe(1);
    expect(sumSamples(m, "thaw_placement_decisions_total", { reason: "best_predicted" })).toBe(1);
    expect(sumSamples(m, "thaw_placements_total", { outcome: "unplaceable" })).toBe(1);
  });
});
