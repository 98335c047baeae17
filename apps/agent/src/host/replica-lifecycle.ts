import {
  type AgentErrorCode,
  type AgentReplicaState,
  type ColdStartOutcomeReport,
  type EndedAgentReplicaState,
  type KernelCacheCapturedReport,
  type ParkReplicaRequest,
  type ParkReplicaResponse,
  type Phase,
  type PhaseEventReport,
  type StartPath,
  type StartReplicaRequest,
  type StartReplicaResponse,
  type StopReplicaResponse,
} from "@thaw/protocol";
import { type Logger } from "pino";
import { AgentError } from "../agent-error.ts";
import { type AgentMetrics } from "../metrics.ts";
import { type EmitPhase, type KernelCacheCapture, PhaseFailedError } from "../runtimes/runtime.ts";
import { type GpuLedger } from "./gpu-ledger.ts";
import { type HostRuntime } from "./host-runtime.ts";
import { type ShutdownGate } from "./shutdown-gate.ts";

/** Where phase events, outcomes and captured kernel caches go (the telemetry pipeline). */
export interface TelemetrySink {
  event(host: string, event: PhaseEventReport): void;
  outcome(host: string, outcome: ColdStartOutcomeReport): void;
  kernelCache(host: string, report: KernelCacheCapturedReport): void;
}

export interface ReplicaLifecycleDeps {
  hostName: string;
  runtime: HostRuntime;
  gpus: GpuLedger;
  gate: ShutdownGate;
  telemetry: TelemetrySink;
  log: Logger;
  metrics?: AgentMetrics;
}

/** A start this host accepted: while it runs (or holds GPUs), then remembered for a while. */
export interface ReplicaRecord {
  replicaId: string;
  coldStartId: string;
  path: StartPath;
  deploymentKey: string;
  state: AgentReplicaState | EndedAgentReplicaState;
  gpus: number[];
  answer: StartReplicaResponse;
  abort: AbortController;
  /** Settles when the start has ended (ready or failed); never rejects. */
  done: Promise<void>;
  endedAt?: number;
}

/** How long a finished start is remembered, so that a resent start gets the same answer. */
const TOMBSTONE_MS = 10 * 60_000;

const FIRST_PHASE: Record<StartPath, Phase> = {
  warm: "handover",
  wake: "load_weights",
  restore: "restore",
  peer: "pull",
  lazy: "prefetch",
  pull: "pull",
};

/**
 * The replicas of one host: starting → running ⇄ warm, → stopped or failed. A start is
 * acknowledged at once and run in the background, streaming its phases; an ended replica is
 * remembered (a tombstone) so that a resent start gets the same answer and no second run.
 */
export class ReplicaLifecycle {
  private readonly replicas = new Map<string, ReplicaRecord>();
  /** Kernel-cache captures running after their starts were ready; each settles, never rejects. */
  private readonly captures = new Set<Promise<void>>();
  /** Stops the captures when the agent hands its work back (abortStarts). */
  private captureAbort = new AbortController();

  constructor(private readonly deps: ReplicaLifecycleDeps) {}

  /**
   * Accepts a start and runs it in the background. Idempotent: the same (replica, cold
   * start) again gets the same answer and no second run. Throws AgentError 409 when this
   * host cannot serve it, 503 while shutting down.
   */
  start(request: StartReplicaRequest): StartReplicaResponse {
    const existing = this.replicas.get(request.replicaId);
    if (existing && existing.coldStartId === request.coldStartId) {
      if (existing.path !== request.path) {
        throw new AgentError(
          "idempotency_conflict",
          `cold start ${request.coldStartId} was accepted with path ${existing.path}, not ${request.path}`,
          "path",
        );
      }
      return existing.answer;
    }
    this.deps.gate.refuseNewWork("the agent is shutting down and accepts no new starts");
    const handoverToSelf = request.path === "warm" && request.warmReplicaId === request.replicaId;
    const wakeSelf = request.path === "wake" && request.sleepingReplicaId === request.replicaId;
    if (
      existing &&
      (existing.state === "starting" ||
        existing.state === "running" ||
        (existing.state === "warm" && !handoverToSelf) ||
        (existing.state === "sleeping" && !wakeSelf))
    ) {
      throw new AgentError(
        "replica_exists",
        `replica ${request.replicaId} is already ${existing.state} on this host (cold start ${existing.coldStartId})`,
        "replicaId",
      );
    }
    const gpus = this.admit(request);

    const abort = new AbortController();
    const record: ReplicaRecord = {
      replicaId: request.replicaId,
      coldStartId: request.coldStartId,
      path: request.path,
      deploymentKey: deploymentKeyOf(request),
      state: "starting",
      gpus,
      answer: {
        replicaId: request.replicaId,
        coldStartId: request.coldStartId,
        path: request.path,
        acceptedAt: new Date().toISOString(),
      },
      abort,
      done: Promise.resolve(),
    };
    const sourceId =
      request.path === "warm"
        ? request.warmReplicaId
        : request.path === "wake"
          ? request.sleepingReplicaId
          : undefined;
    if (sourceId !== undefined) {
      // The parked (or sleeping) replica becomes this one: its GPUs with it.
      const source = this.replicas.get(sourceId);
      if (source) {
        this.release(source);
        this.replicas.delete(source.replicaId);
      }
    }
    this.replicas.set(request.replicaId, record);
    this.deps.gpus.hold(request.replicaId, gpus);
    this.deps.metrics?.starts.inc({ path: request.path, outcome: "accepted" });
    this.deps.metrics?.startsInFlight.inc();
    record.done = this.run(record, request);
    return record.answer;
  }

  /** Checks that this host can serve the start; returns the GPUs it will hold. */
  private admit(request: StartReplicaRequest): number[] {
    const { runtime } = this.deps;
    const refuse = (code: AgentErrorCode, message: string, field?: string): never => {
      this.deps.metrics?.starts.inc({ path: request.path, outcome: "refused" });
      throw new AgentError(code, message, field);
    };
    const capabilities = runtime.capabilities?.();
    if (capabilities && !capabilities.paths.includes(request.path)) {
      refuse(
        "path_unsupported",
        capabilities.reasons[request.path] ?? `this host cannot serve the ${request.path} path`,
        "path",
      );
    }
    let gpus = request.gpus;
    if (request.path === "warm") {
      const sourceId = request.warmReplicaId ?? "";
      const source = this.replicas.get(sourceId);
      if (source?.state !== "warm") {
        refuse(
          "warm_replica_missing",
          `no idle (parked) replica ${sourceId} on this host to hand over`,
          "warmReplicaId",
        );
      }
      if (source!.deploymentKey !== deploymentKeyOf(request)) {
        refuse(
          "warm_replica_mismatch",
          `parked replica ${sourceId} runs another deployment (${source!.deploymentKey})`,
          "warmReplicaId",
        );
      }
      if (gpus.length > 0 && !sameSet(gpus, source!.gpus)) {
        refuse(
          "gpu_mismatch",
          `parked replica ${sourceId} holds GPUs [${source!.gpus.join(", ")}], not [${gpus.join(", ")}]`,
          "gpus",
        );
      }
      gpus = source!.gpus;
    }
    if (request.path === "wake") {
      // A sleeping engine's CUDA context stays on the GPUs it slept on: it wakes there or not
      // at all, once no other replica holds them.
      const sourceId = request.sleepingReplicaId ?? "";
      const source = this.replicas.get(sourceId);
      if (source?.state !== "sleeping") {
        refuse(
          "sleeping_replica_missing",
          `no sleeping replica ${sourceId} on this host to wake`,
          "sleepingReplicaId",
        );
      }
      if (source!.deploymentKey !== deploymentKeyOf(request)) {
        refuse(
          "sleeping_replica_mismatch",
          `sleeping replica ${sourceId} runs another deployment (${source!.deploymentKey})`,
          "sleepingReplicaId",
        );
      }
      if (gpus.length > 0 && !sameSet(gpus, source!.gpus)) {
        refuse(
          "gpu_mismatch",
          `sleeping replica ${sourceId} wakes on GPUs [${source!.gpus.join(", ")}], not [${gpus.join(", ")}]`,
          "gpus",
        );
      }
      gpus = source!.gpus;
    }
    const refusal = runtime.refusal?.(request);
    if (refusal)
      refuse(
        "path_infeasible",
        refusal,
        request.path === "restore" ? "deployment.snapshot" : "path",
      );
    const taken = this.deps.gpus.refusal(gpus, request.replicaId, request.warmReplicaId);
    if (taken) refuse(taken.code, taken.message, "gpus");
    return [...gpus];
  }

  private async run(record: ReplicaRecord, request: StartReplicaRequest): Promise<void> {
    const { hostName, telemetry, metrics, log } = this.deps;
    let sequence = 0;
    const { coldStartId, path } = record;
    const emit: EmitPhase = (event) => {
      telemetry.event(hostName, {
        coldStartId,
        sequence: ++sequence,
        ...event,
        attributes: event.attributes ?? {},
      });
      metrics?.phaseSeconds.observe({ path, phase: event.phase }, event.seconds);
    };
    try {
      await this.deps.runtime.startReplica(request, emit, { signal: record.abort.signal });
      record.state = "running";
      telemetry.outcome(hostName, {
        coldStartId,
        status: "succeeded",
        endedAt: new Date().toISOString(),
      });
      metrics?.starts.inc({ path, outcome: "succeeded" });
      const capture = request.kernelCache?.capture;
      if (capture) this.captureKernelCache(record, request, capture);
    } catch (error) {
      const failure =
        error instanceof PhaseFailedError
          ? error
          : new PhaseFailedError(
              FIRST_PHASE[path],
              record.answer.acceptedAt,
              0,
              error instanceof Error ? error.message : String(error),
            );
      const message = failure.message.slice(0, 1_000);
      // The failed phase is reported too: the UI stacks it, up to where it failed.
      emit({
        phase: failure.phase,
        startedAt: failure.startedAt,
        endedAt: new Date().toISOString(),
        seconds: failure.seconds,
        attributes: { failed: true, error: message },
      });
      telemetry.outcome(hostName, {
        coldStartId,
        status: "failed",
        failedPhase: failure.phase,
        error: failure.message.slice(0, 4_000),
        endedAt: new Date().toISOString(),
      });
      record.state = "failed";
      record.endedAt = Date.now();
      this.release(record);
      metrics?.starts.inc({ path, outcome: "failed" });
      log.info(
        { host: hostName, replicaId: record.replicaId, coldStartId, path, error: message },
        "start failed",
      );
    } finally {
      metrics?.startsInFlight.dec();
    }
  }

  /**
   * Packs and pushes the kernel cache the start compiled, in the background: the replica is
   * ready and its outcome reported already, and it serves meanwhile. The captured cache is
   * reported once pushed. A failure is only logged: nothing is reported, the control plane's
   * claim on the capture expires and a later start of the deployment captures instead.
   */
  private captureKernelCache(
    record: ReplicaRecord,
    request: StartReplicaRequest,
    capture: KernelCacheCapture,
  ): void {
    const { hostName, runtime, telemetry, log } = this.deps;
    const { replicaId, coldStartId } = record;
    const { kernelCacheId } = capture;
    const context = { host: hostName, replicaId, coldStartId, kernelCacheId };
    if (!runtime.captureKernelCache) {
      log.warn(context, "kernel-cache capture asked of a runtime that cannot capture; skipped");
      return;
    }
    const t0 = performance.now();
    const running = runtime
      .captureKernelCache(replicaId, request, capture, { signal: this.captureAbort.signal })
      .then(
        ({ digest, bytes }) => {
          telemetry.kernelCache(hostName, { coldStartId, kernelCacheId, digest, bytes });
          log.info(
            { ...context, digest, bytes, seconds: (performance.now() - t0) / 1000 },
            "kernel cache captured and pushed",
          );
        },
        (error: unknown) => {
          // The runtime's own words (a tool's stderr, a refusal): the store is the operator's
          // and its pushes carry no credential of the start, so there is no secret in them.
          const reason = (error instanceof Error ? error.message : String(error)).slice(0, 1_000);
          log.warn(
            { ...context, ref: capture.ref, error: reason },
            "kernel-cache capture failed; nothing reported (a later start captures it)",
          );
        },
      )
      .finally(() => this.captures.delete(running));
    this.captures.add(running);
  }

  async park(request: ParkReplicaRequest): Promise<ParkReplicaResponse> {
    const record = this.requireLive(request.replicaId);
    const parked = request.gpus === "release" ? "sleeping" : "warm";
    // A resent park is answered as the first was.
    if (record.state === parked) return { replicaId: record.replicaId, state: parked };
    // A parked (warm) replica may be put to sleep when its keep-alive ends.
    const from = parked === "sleeping" ? ["running", "warm"] : ["running"];
    if (!from.includes(record.state)) {
      throw new AgentError(
        "replica_not_running",
        `replica ${request.replicaId} is ${record.state}, not running`,
        "replicaId",
      );
    }
    await this.deps.runtime.parkReplica(request);
    record.state = parked;
    // A sleeping engine gave its GPU memory back: other replicas may start on its GPUs. It
    // keeps their indices (record.gpus), the only ones it can wake on.
    if (parked === "sleeping") this.deps.gpus.release(record.replicaId, record.gpus);
    return { replicaId: record.replicaId, state: parked };
  }

  /** Stops a replica (aborting its start if it is still starting). Idempotent. */
  async stop(replicaId: string): Promise<StopReplicaResponse> {
    const record = this.replicas.get(replicaId);
    const wasActive =
      record !== undefined && record.state !== "stopped" && record.state !== "failed";
    if (record?.state === "starting") {
      record.abort.abort(new Error("stopped by the scheduler"));
      await record.done;
    }
    const stopped = await this.deps.runtime.stopReplica(replicaId);
    if (record) {
      this.release(record);
      if (record.state !== "failed") record.state = "stopped";
      record.endedAt ??= Date.now();
    }
    return {
      replicaId,
      found: stopped.found || wasActive,
      signal: stopped.signal,
      seconds: stopped.seconds,
    };
  }

  /** A running replica, or AgentError: not found (404) or not running (409). */
  requireRunning(replicaId: string): ReplicaRecord {
    const record = this.requireLive(replicaId);
    if (record.state !== "running") {
      throw new AgentError(
        "replica_not_running",
        `replica ${replicaId} is ${record.state}, not running`,
        "replicaId",
      );
    }
    return record;
  }

  /** The replica's process is gone without a stop (a snapshot capture ends it). */
  markStopped(record: ReplicaRecord): void {
    this.release(record);
    record.state = "stopped";
    record.endedAt = Date.now();
  }

  /** The record of a replica this host accepted (while remembered). */
  recordOf(replicaId: string): Readonly<ReplicaRecord> | undefined {
    return this.replicas.get(replicaId);
  }

  /**
   * Starts still running, and kernel-cache captures still packing or pushing: the agent's
   * shutdown waits for both (up to its grace) before it hands work back.
   */
  inFlight(): Promise<void>[] {
    return [
      ...[...this.replicas.values()].filter((r) => r.state === "starting").map((r) => r.done),
      ...this.captures,
    ];
  }

  /**
   * Hands back every start still running: each reports a failed outcome with this reason. The
   * kernel-cache captures still running are stopped too (their temporary files removed,
   * nothing reported); the returned promises settle once both have.
   */
  abortStarts(reason: string): Promise<void>[] {
    const running = [...this.replicas.values()].filter((r) => r.state === "starting");
    for (const record of running) record.abort.abort(new Error(reason));
    const captures = [...this.captures];
    if (captures.length > 0) {
      this.captureAbort.abort(new Error(reason));
      this.captureAbort = new AbortController();
    }
    return [...running.map((r) => r.done), ...captures];
  }

  /** Forgets replicas that ended longer ago than a resent start could arrive. */
  pruneTombstones(): void {
    const before = Date.now() - TOMBSTONE_MS;
    for (const [id, record] of this.replicas) {
      if (record.endedAt !== undefined && record.endedAt < before) this.replicas.delete(id);
    }
  }

  private requireLive(replicaId: string): ReplicaRecord {
    const record = this.replicas.get(replicaId);
    if (!record || record.state === "stopped" || record.state === "failed") {
      throw new AgentError(
        "replica_not_found",
        `no replica ${replicaId} on this host`,
        "replicaId",
      );
    }
    return record;
  }

  private release(record: ReplicaRecord): void {
    this.deps.gpus.release(record.replicaId, record.gpus);
  }
}

function deploymentKeyOf(request: StartReplicaRequest): string {
  const { deployment } = request;
  return deployment.deploymentId ?? deployment.imageDigest ?? deployment.imageRef;
}

function sameSet(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}
