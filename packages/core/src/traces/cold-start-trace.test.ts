import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Phase } from "../vocabulary/index.ts";
import { coldStartTraceSpans, type ColdStartTraceInput } from "./cold-start-trace.ts";

const T0 = Date.UTC(2026, 10, 26, 12, 0, 0);
const at = (ms: number) => new Date(T0 + ms);

const base = (over: Partial<ColdStartTraceInput["coldStart"]> = {}): ColdStartTraceInput => ({
  coldStart: {
    id: "cs",
    endpointId: "ep",
    deploymentId: "dep",
    replicaId: "rep",
    nodeId: "node",
    path: "restore",
    locality: "snapshot-local",
    attempt: 1,
    trigger: "scale_up",
    explored: false,
    status: "succeeded",
    error: null,
    failedPhase: null,
    predictedMeanSeconds: 20,
    predictedP10Seconds: 15,
    predictedP90Seconds: 30,
    actualSeconds: 22,
    requestedAt: at(300),
    dispatchedAt: at(500),
    readyAt: at(22_300),
    finishedAt: null,
    ...over,
  },
  node: { name: "gpu-1", instanceType: "g6e.xlarge", gpuModel: "L40S" },
  replicaCreatedAt: at(100),
  scaleRequestedAt: at(0),
  phases: [
    {
      phase: "fetch_snapshot",
      sequence: 1,
      startedAt: at(600),
      endedAt: at(4_600),
      seconds: 4,
      bytes: 8e9,
      throughputBps: null,
      simulated: false,
    },
    {
      phase: "restore",
      sequence: 2,
      startedAt: at(4_600),
      endedAt: at(21_600),
      seconds: 17,
      bytes: null,
      throughputBps: null,
      simulated: false,
    },
    {
      phase: "ready",
      sequence: 3,
      startedAt: at(21_600),
      endedAt: at(21_600),
      seconds: 0,
      bytes: null,
      throughputBps: null,
      simulated: false,
    },
  ],
});

describe("coldStartTraceSpans", () => {
  it("plans the control plane's stages and one span per phase, with the start's facts on the root", () => {
    const spans = coldStartTraceSpans(base());
    expect(spans.map((s) => s.name)).toEqual([
      "thaw.cold_start",
      "thaw.reconcile",
      "thaw.place",
      "thaw.dispatch",
      "thaw.agent_start",
      "fetch_snapshot",
      "restore",
      "ready",
    ]);
    const root = spans[0]!;
    expect(root.start).toEqual(at(0));
    expect(root.end).toEqual(at(22_300));
    expect(root.attributes).toMatchObject({
      "thaw.path": "restore",
      "thaw.node.name": "gpu-1",
      "thaw.predicted.p90_seconds": 30,
      "thaw.actual_seconds": 22,
      "thaw.outcome": "succeeded",
    });
    const fetch = spans.find((s) => s.name === "fetch_snapshot")!;
    // 8 GB in 4 s: the throughput is derived when the agent sent none.
    expect(fetch.attributes).toMatchObject({
      "thaw.phase.bytes": 8e9,
      "thaw.phase.seconds": 4,
      "thaw.phase.throughput_bytes_per_second": 2e9,
    });
    expect(spans.some((s) => s.error)).toBe(false);
  });

  it("marks a failed start and its failed phase as errors", () => {
    const input = base({
      status: "failed",
      error: "CRIU restore failed",
      failedPhase: "restore",
      readyAt: null,
      finishedAt: at(21_000),
    });
    const spans = coldStartTraceSpans(input);
    expect(spans.find((s) => s.name === "thaw.cold_start")!.error).toBe("CRIU restore failed");
    expect(spans.find((s) => s.name === "restore")!.error).toBe("CRIU restore failed");
    expect(spans.find((s) => s.name === "fetch_snapshot")!.error).toBeUndefined();
  });

  it("lays a sim host's phases end to end at their simulated seconds", () => {
    const input = base();
    input.phases = input.phases.map((p) => ({
      ...p,
      simulated: true,
      startedAt: at(600),
      endedAt: at(601),
    }));
    const spans = coldStartTraceSpans(input);
    const restore = spans.find((s) => s.name === "restore")!;
    expect(restore.start).toEqual(at(500 + 4_000));
    expect(restore.end).toEqual(at(500 + 21_000));
    expect(restore.attributes["thaw.simulated"]).toBe(true);
  });

  it("keeps every span inside its parent, whatever the timestamps and phases", () => {
    const phaseArb = fc.record({
      phase: fc.constantFrom(...Phase.options),
      // Negative: the agent's clock behind ours.
      startOffset: fc.integer({ min: -5_000, max: 600_000 }),
      durationMs: fc.integer({ min: 0, max: 600_000 }),
      ended: fc.boolean(),
      seconds: fc.option(fc.double({ min: 0, max: 900, noNaN: true })),
      simulated: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.record({
          gaps: fc.array(fc.integer({ min: 0, max: 60_000 }), { minLength: 4, maxLength: 4 }),
          attempt: fc.integer({ min: 1, max: 3 }),
          scaleKnown: fc.boolean(),
          dispatched: fc.boolean(),
          outcome: fc.constantFrom("succeeded", "failed"),
          phases: fc.array(phaseArb, { maxLength: 12 }),
        }),
        (c) => {
          const [g0, g1, g2, g3] = c.gaps as [number, number, number, number];
          const created = g0;
          const requested = created + g1;
          const dispatched = requested + g2;
          const closed = dispatched + g3;
          const input = base({
            attempt: c.attempt,
            status: c.outcome,
            requestedAt: at(requested),
            dispatchedAt: c.dispatched ? at(dispatched) : null,
            readyAt: c.outcome === "succeeded" ? at(closed) : null,
            finishedAt: c.outcome === "failed" ? at(closed) : null,
          });
          input.replicaCreatedAt = at(created);
          input.scaleRequestedAt = c.scaleKnown ? at(0) : null;
          input.phases = c.phases.map((p, i) => ({
            phase: p.phase,
            sequence: i + 1,
            startedAt: at(dispatched + p.startOffset),
            endedAt: p.ended ? at(dispatched + p.startOffset + p.durationMs) : null,
            seconds: p.seconds,
            bytes: null,
            throughputBps: null,
            simulated: p.simulated,
          }));
          const spans = coldStartTraceSpans(input);
          const byKey = new Map(spans.map((s) => [s.key, s]));
          expect(byKey.size).toBe(spans.length);
          expect(spans.filter((s) => s.parent === null)).toHaveLength(1);
          expect(spans.filter((s) => s.key.startsWith("phase-"))).toHaveLength(c.phases.length);
          for (const span of spans) {
            expect(span.start.getTime()).toBeLessThanOrEqual(span.end.getTime());
            if (span.parent === null) continue;
            const parent = byKey.get(span.parent)!;
            expect(parent).toBeDefined();
            expect(span.start.getTime()).toBeGreaterThanOrEqual(parent.start.getTime());
            expect(span.end.getTime()).toBeLessThanOrEqual(parent.end.getTime());
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
