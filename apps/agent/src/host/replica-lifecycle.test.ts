import { randomUUID } from "node:crypto";
import {
  type ColdStartOutcomeReport,
  type KernelCacheCapturedReport,
  type PhaseEventReport,
  StartReplicaRequest,
  type StartReplicaRequestInput,
} from "@thaw/protocol";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { type CapturedKernelCache, type KernelCacheCapture } from "../runtimes/runtime.ts";
import { GpuLedger } from "./gpu-ledger.ts";
import { type HostRuntime } from "./host-runtime.ts";
import { ReplicaLifecycle, type TelemetrySink } from "./replica-lifecycle.ts";
import { ShutdownGate } from "./shutdown-gate.ts";

// A start told to capture its kernel cache: the capture runs after the outcome is reported,
// in the background, and is reported as telemetry once pushed; a failed one only logs. The
// sim fleet runs the same through the HTTP API in agent-server.test.ts.

const HOST = "lifecycle-host-1";

class RecordingTelemetry implements TelemetrySink {
  readonly log: (
    | { kind: "event"; report: PhaseEventReport }
    | { kind: "outcome"; report: ColdStartOutcomeReport }
    | { kind: "kernelCache"; report: KernelCacheCapturedReport }
  )[] = [];
  event(_host: string, report: PhaseEventReport) {
    this.log.push({ kind: "event", report });
  }
  outcome(_host: string, report: ColdStartOutcomeReport) {
    this.log.push({ kind: "outcome", report });
  }
  kernelCache(_host: string, report: KernelCacheCapturedReport) {
    this.log.push({ kind: "kernelCache", report });
  }
  kinds() {
    return this.log.map((entry) => entry.kind);
  }
}

interface CaptureCall {
  replicaId: string;
  capture: KernelCacheCapture;
  signal: AbortSignal | undefined;
  resolve: (captured: CapturedKernelCache) => void;
  reject: (error: Error) => void;
}

interface FakeOptions {
  /** The runtime has no captureKernelCache. */
  canCapture?: boolean;
  /** Every start fails with this message. */
  startFails?: string;
}

/** A runtime whose starts are ready at once and whose captures wait for the test. */
function fakeRuntime(o: FakeOptions = {}) {
  const captures: CaptureCall[] = [];
  const runtime: HostRuntime = {
    kind: "sim",
    startReplica: (input) =>
      o.startFails !== undefined
        ? Promise.reject(new Error(o.startFails))
        : Promise.resolve({
            replicaId: input.replicaId,
            containerId: input.replicaId,
            path: input.path,
            seconds: 0,
            readiness: { status: 200, attempts: 1 },
          }),
    stopReplica: (replicaId) =>
      Promise.resolve({ replicaId, found: true, signal: "SIGTERM", seconds: 0 }),
    parkReplica: () => Promise.resolve(),
    captureSnapshot: () => Promise.reject(new Error("not here")),
    inventory: () =>
      Promise.resolve({
        images: [],
        snapshotIds: [],
        warmReplicaIds: [],
        sleepingReplicaIds: [],
        replicas: [],
      }),
    ...(o.canCapture === false
      ? {}
      : {
          captureKernelCache: (replicaId, _request, capture, options) =>
            new Promise<CapturedKernelCache>((resolve, reject) => {
              const signal = options?.signal;
              captures.push({ replicaId, capture, signal, resolve, reject });
              signal?.addEventListener("abort", () => reject(signal.reason as Error), {
                once: true,
              });
            }),
        }),
  };
  return { runtime, captures };
}

function setup(o: FakeOptions = {}) {
  const { runtime, captures } = fakeRuntime(o);
  const telemetry = new RecordingTelemetry();
  const lines: { level: number; msg: string; error?: string; kernelCacheId?: string }[] = [];
  const log = pino(
    { level: "info" },
    { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) },
  );
  const lifecycle = new ReplicaLifecycle({
    hostName: HOST,
    runtime,
    gpus: new GpuLedger(1),
    gate: new ShutdownGate(),
    telemetry,
    log,
  });
  return { lifecycle, telemetry, captures, lines };
}

const kernelCacheId = randomUUID();
const request = (input: Partial<StartReplicaRequestInput> = {}) =>
  StartReplicaRequest.parse({
    replicaId: randomUUID(),
    coldStartId: randomUUID(),
    path: "pull",
    gpus: [0],
    deployment: { deploymentId: randomUUID(), imageRef: "ghcr.io/thaw/llama:v1" },
    readiness: { port: 8000, timeoutSeconds: 60 },
    kernelCache: { capture: { kernelCacheId, ref: "registry.internal/kernel-caches:d-l40s" } },
    ...input,
  });

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("ReplicaLifecycle: kernel-cache capture after a start", () => {
  it("reports the outcome without waiting for the capture, then the captured cache", async () => {
    const { lifecycle, telemetry, captures } = setup();
    const start = request();
    lifecycle.start(start);
    await lifecycle.recordOf(start.replicaId)!.done;
    await settled();
    // Ready and reported while the capture is still packing: it delays nothing.
    expect(lifecycle.recordOf(start.replicaId)?.state).toBe("running");
    expect(telemetry.kinds()).toEqual(["outcome"]);
    expect(captures).toHaveLength(1);
    expect(captures[0]).toMatchObject({
      replicaId: start.replicaId,
      capture: { kernelCacheId, ref: "registry.internal/kernel-caches:d-l40s" },
    });
    // The agent's shutdown waits for it as for a start.
    expect(lifecycle.inFlight()).toHaveLength(1);

    const digest = `sha256:${"d".repeat(64)}`;
    captures[0]!.resolve({ digest, bytes: 123_456 });
    await Promise.all(lifecycle.inFlight());
    expect(telemetry.log.at(-1)).toEqual({
      kind: "kernelCache",
      report: { coldStartId: start.coldStartId, kernelCacheId, digest, bytes: 123_456 },
    });
    expect(lifecycle.inFlight()).toHaveLength(0);
  });

  it("logs a failed capture at warn with its reason and reports nothing", async () => {
    const { lifecycle, telemetry, captures, lines } = setup();
    const start = request();
    lifecycle.start(start);
    await lifecycle.recordOf(start.replicaId)!.done;
    await settled();
    captures[0]!.reject(new Error("push the kernel cache: 503 Service Unavailable"));
    await Promise.all(lifecycle.inFlight());
    expect(telemetry.kinds()).toEqual(["outcome"]);
    expect(lines.find((l) => l.level === 40)).toMatchObject({
      msg: expect.stringMatching(/kernel-cache capture failed/) as string,
      error: "push the kernel cache: 503 Service Unavailable",
      kernelCacheId,
    });
  });

  it("stops a capture still running when the agent hands its work back, reporting nothing", async () => {
    const { lifecycle, telemetry, captures } = setup();
    const start = request();
    lifecycle.start(start);
    await lifecycle.recordOf(start.replicaId)!.done;
    await settled();
    const handedBack = lifecycle.abortStarts("agent shutting down");
    expect(handedBack).toHaveLength(1);
    await Promise.all(handedBack);
    expect(captures[0]!.signal?.aborted).toBe(true);
    expect(telemetry.kinds()).toEqual(["outcome"]);
    expect(lifecycle.inFlight()).toHaveLength(0);
  });

  it("captures only when told to, and skips it on a runtime that cannot", async () => {
    const plain = setup();
    const start = request({ kernelCache: undefined });
    plain.lifecycle.start(start);
    await plain.lifecycle.recordOf(start.replicaId)!.done;
    await settled();
    expect(plain.captures).toHaveLength(0);
    expect(plain.lifecycle.inFlight()).toHaveLength(0);

    const unable = setup({ canCapture: false });
    const told = request();
    unable.lifecycle.start(told);
    await unable.lifecycle.recordOf(told.replicaId)!.done;
    expect(unable.telemetry.kinds()).toEqual(["outcome"]);
    expect(unable.lines.find((l) => l.level === 40)?.msg).toMatch(/cannot capture/);
  });

  it("does not capture after a failed start", async () => {
    const { lifecycle, telemetry, captures } = setup({ startFails: "pull failed" });
    const start = request();
    lifecycle.start(start);
    await lifecycle.recordOf(start.replicaId)!.done;
    await settled();
    expect(telemetry.log.find((e) => e.kind === "outcome")?.report).toMatchObject({
      status: "failed",
    });
    expect(captures).toHaveLength(0);
  });
});
