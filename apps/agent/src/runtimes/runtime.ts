import { type NodeRuntime, type Phase } from "@thaw/core/vocabulary";
import {
  type AgentReplicaState,
  type CaptureSnapshotRequestInput,
  type InventoryImage,
  type KernelCacheInstruction,
  type ParkReplicaRequestInput,
  type StartReplicaRequest,
  type StartReplicaRequestInput,
} from "@thaw/protocol";

// The one interface every runtime implements: `containerd` (real hosts) and `sim`
// (simulated GPU hosts). The agent's HTTP API and telemetry stream sit on top of it.

export type PhaseAttributes = Record<string, string | number | boolean>;

/**
 * One phase of a cold start, reported as it ends (ARCHITECTURE.md §4). The telemetry layer adds
 * the cold start id and the sequence number (PhaseEventReport).
 */
export interface PhaseEvent {
  phase: Phase;
  startedAt: string;
  endedAt: string;
  seconds: number;
  bytes?: number;
  attributes?: PhaseAttributes;
}

/** Called once per phase, in order, as each phase ends. Must not throw. */
export type EmitPhase = (event: PhaseEvent) => void;

export interface StartedReplica {
  replicaId: string;
  /** The runtime's own handle (the containerd container id). */
  containerId: string;
  path: StartReplicaRequest["path"];
  /** Wall time from the call to the ready marker. */
  seconds: number;
  /** The readiness probe's last answer. */
  readiness: { status: number; attempts: number };
}

export interface StoppedReplica {
  replicaId: string;
  /** False when the runtime did not know the replica (stop is idempotent). */
  found: boolean;
  /** The last signal the task needed, if it was running. */
  signal: "SIGTERM" | "SIGKILL" | null;
  seconds: number;
}

export interface CapturedSnapshot {
  snapshotId: string;
  checkpointRef: string;
  /** The checkpoint image's manifest digest as written: the control plane restores by it. */
  digest: string;
  seconds: number;
  pushed: boolean;
}

export interface RuntimeInventory {
  images: InventoryImage[];
  snapshotIds: string[];
  warmReplicaIds: string[];
  sleepingReplicaIds: string[];
  replicas: { replicaId: string; containerId: string; state: AgentReplicaState }[];
}

/** Where a start's compiled-kernel cache is pushed to (its request's `kernelCache.capture`). */
export type KernelCacheCapture = NonNullable<KernelCacheInstruction["capture"]>;

export interface CapturedKernelCache {
  /** The pushed artifact's manifest digest (sha256:…): every later fetch is by it. */
  digest: string;
  /** The cache as packed (the layer's size). */
  bytes: number;
}

export interface StartOptions {
  /** Cancels the start (e.g. the cold start was cancelled); the partial replica is removed. */
  signal?: AbortSignal;
}

export interface Runtime {
  readonly kind: NodeRuntime;
  /** Brings a replica up by the requested path; rejects with a PhaseFailedError. */
  startReplica(
    request: StartReplicaRequestInput,
    emit: EmitPhase,
    options?: StartOptions,
  ): Promise<StartedReplica>;
  stopReplica(replicaId: string): Promise<StoppedReplica>;
  /** Keeps a ready replica idle (paused) for a later warm handover. */
  parkReplica(request: ParkReplicaRequestInput): Promise<void>;
  /** Captures a snapshot of a running replica, then stops the replica. */
  captureSnapshot(request: CaptureSnapshotRequestInput): Promise<CapturedSnapshot>;
  inventory(): Promise<RuntimeInventory>;
  /**
   * Packs the kernel cache a replica's engine compiled into on its way to ready (Triton,
   * torch.compile/Inductor, FlashInfer, DeepGEMM: vLLM's VLLM_CACHE_ROOT and the JIT caches
   * beside it) and pushes it to `capture.ref` in the operator's store, for later starts of the
   * deployment on the same GPU model and driver to fetch. Called in the background once the
   * start that was told to capture (`request.kernelCache.capture`) is ready and its outcome
   * reported; the replica keeps serving meanwhile. Rejects when the replica is not running here
   * or there is nothing to pack; `signal` (agent shutdown) stops it, leaving nothing reported.
   * Optional: a runtime without it captures nothing (the control plane's claim expires).
   */
  captureKernelCache?(
    replicaId: string,
    request: StartReplicaRequest,
    capture: KernelCacheCapture,
    options?: { signal?: AbortSignal },
  ): Promise<CapturedKernelCache>;
}

/** A start failed: which phase, after how long, and why (the tool's own words included). */
export class PhaseFailedError extends Error {
  override readonly name = "PhaseFailedError";
  constructor(
    readonly phase: Phase,
    readonly startedAt: string,
    readonly seconds: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${phase} phase failed after ${seconds.toFixed(3)} s: ${message}`, options);
  }
}
