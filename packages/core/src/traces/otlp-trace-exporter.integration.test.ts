import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hexId, spanAttribute, startOtlpReceiver, type OtlpReceiver } from "../testing/index.ts";
import { coldStartTraceSpans, type ColdStartTraceInput } from "./cold-start-trace.ts";
import { OtlpTraceExport, parseOtlpHeaders } from "./otlp-trace-exporter.ts";

// The SDK's OTLP/HTTP protobuf export, received and decoded by a receiver built on the
// OpenTelemetry project's own protobuf classes: the spans a backend gets are the planned ones.

const at = (ms: number) => new Date(Date.UTC(2026, 10, 26, 12, 0, 0) + ms);
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

const failedRestore: ColdStartTraceInput = {
  coldStart: {
    id: "0193a000-0000-7000-8000-000000000001",
    endpointId: "ep",
    deploymentId: "dep",
    replicaId: "rep",
    nodeId: "node",
    path: "restore",
    locality: "snapshot-store",
    attempt: 1,
    trigger: "scale_up",
    explored: false,
    status: "failed",
    error: "restore: CRIU exited 1",
    failedPhase: "restore",
    predictedMeanSeconds: 18.5,
    predictedP10Seconds: 12,
    predictedP90Seconds: 31,
    actualSeconds: null,
    requestedAt: at(250),
    dispatchedAt: at(400),
    readyAt: null,
    finishedAt: at(9_400),
  },
  node: { name: "gpu-a", instanceType: "g6e.xlarge", gpuModel: "L40S" },
  replicaCreatedAt: at(100),
  scaleRequestedAt: at(0),
  phases: [
    {
      phase: "fetch_snapshot",
      sequence: 1,
      startedAt: at(450),
      endedAt: at(6_450),
      seconds: 6,
      bytes: 12_000_000_000n,
      throughputBps: 2e9,
      simulated: false,
    },
    {
      phase: "restore",
      sequence: 2,
      startedAt: at(6_450),
      endedAt: at(9_400),
      seconds: 2.95,
      bytes: null,
      throughputBps: null,
      simulated: false,
    },
  ],
};

describe("OtlpTraceExport → a real OTLP receiver", () => {
  let receiver: OtlpReceiver;
  let exporter: OtlpTraceExport;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    exporter = new OtlpTraceExport({
      endpoint: `${receiver.endpoint}/`,
      headers: parseOtlpHeaders("authorization=Bearer%20collector-key,x-tenant=ops"),
      serviceName: "thaw-scheduler",
      serviceVersion: "0.1.0",
    });
  });
  afterAll(async () => {
    await exporter?.shutdown();
    await receiver?.stop();
  });

  it("delivers every planned span under the caller's trace, timed and attributed as planned", async () => {
    const planned = coldStartTraceSpans(failedRestore);
    exporter.record(planned, `00-${TRACE_ID}-${CALLER_SPAN}-01`);
    await exporter.flush();
    // (The SDK's flush resolves once the batch is handed to the HTTP request, not answered.)
    await expect.poll(() => receiver.spans().length).toBe(planned.length);
    const got = receiver.spans();
    expect(new Set(got.map((g) => g.service))).toEqual(new Set(["thaw-scheduler"]));
    expect(receiver.lastHeaders()).toMatchObject({
      authorization: "Bearer collector-key",
      "x-tenant": "ops",
    });

    const byName = new Map(got.map((g) => [g.span.name, g.span]));
    const ids = new Map(got.map((g) => [hexId(g.span.spanId), g.span.name]));
    for (const span of planned) {
      const sent = byName.get(span.name)!;
      expect(hexId(sent.traceId), span.name).toBe(TRACE_ID);
      // Nanosecond times are the recorded milliseconds, exactly.
      expect(BigInt(sent.startTimeUnixNano)).toBe(BigInt(span.start.getTime()) * 1_000_000n);
      expect(BigInt(sent.endTimeUnixNano)).toBe(BigInt(span.end.getTime()) * 1_000_000n);
      const parentName = span.parent ? planned.find((p) => p.key === span.parent)!.name : null;
      if (parentName) expect(ids.get(hexId(sent.parentSpanId!))).toBe(parentName);
      else expect(hexId(sent.parentSpanId!)).toBe(CALLER_SPAN);
    }
    const root = byName.get("thaw.cold_start")!;
    expect(spanAttribute(root, "thaw.path")).toBe("restore");
    expect(spanAttribute(root, "thaw.predicted.p90_seconds")).toBe(31);
    expect(spanAttribute(root, "thaw.node.name")).toBe("gpu-a");
    expect(root.status).toMatchObject({
      code: "STATUS_CODE_ERROR",
      message: "restore: CRIU exited 1",
    });
    const fetch = byName.get("fetch_snapshot")!;
    expect(spanAttribute(fetch, "thaw.phase.bytes")).toBe(12e9);
    expect(spanAttribute(fetch, "thaw.phase.throughput_bytes_per_second")).toBe(2e9);
    expect(byName.get("restore")!.status).toMatchObject({ code: "STATUS_CODE_ERROR" });
    expect(fetch.status?.code ?? "STATUS_CODE_UNSET").toBe("STATUS_CODE_UNSET");
  });

  it("starts a trace of its own when no caller's context was recorded", async () => {
    const before = receiver.spans().length;
    const planned = coldStartTraceSpans({ ...failedRestore, scaleRequestedAt: null });
    exporter.record(planned, null);
    await exporter.flush();
    await expect.poll(() => receiver.spans().length).toBe(before + planned.length);
    const fresh = receiver.spans().slice(before);
    const root = fresh.find((g) => g.span.name === "thaw.cold_start")!.span;
    expect(root.parentSpanId ?? "").toBe("");
    expect(hexId(root.traceId)).not.toBe(TRACE_ID);
    expect(new Set(fresh.map((g) => g.span.traceId)).size).toBe(1);
    expect(fresh.some((g) => g.span.name === "thaw.reconcile")).toBe(false);
  });
});
