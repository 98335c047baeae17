import { createHash } from "node:crypto";
import {
  type ColdStartResult,
  type FailureInjection,
  type HostProfile,
  mulberry32,
  PHYSICS,
  simulateColdStart,
} from "@thaw/core/cold-start-model";
import { type Phase, type StartPath } from "@thaw/core/vocabulary";
import {
  type AgentReplicaState,
  type CaptureSnapshotRequest,
  type HostFigures,
  ParkReplicaRequest,
  type ParkReplicaRequestInput,
  type StartReplicaRequest,
} from "@thaw/protocol";
import {
  type CapturedKernelCache,
  type CapturedSnapshot,
  type EmitPhase,
  type KernelCacheCapture,
  type PhaseAttributes,
  PhaseFailedError,
  type Runtime,
  type RuntimeInventory,
  type StartedReplica,
  type StartOptions,
  type StoppedReplica,
} from "../runtime.ts";
import { type SimClock } from "./sim-clock.ts";
import {
  buildScenario,
  deploymentKey,
  imageBytesOf,
  imageDigestOf,
  simulationOf,
} from "./sim-scenario.ts";

// The simulated GPU host: runs the cold-start model (the scheduler's prior, the same
// physics) on the host's published figures and what it holds, then replays the phases in
// accelerated time. Its inventory changes as a real host's would: images cached after a
// pull or a lazy start, snapshots local after a restore or a capture, parked replicas warm.
// A start given a stored kernel cache fetches it before compile (unless the host kept its
// own); a capture of one is modelled as packing it to disk and pushing it to the store.

export interface SimRuntimeOptions {
  profile: HostProfile;
  figures: HostFigures;
  clock: SimClock;
  /** This host's own noise stream (derive it from the fleet seed and the host name). */
  seed: number;
  failures?: FailureInjection;
  /** Runs stargz-snapshotter (the lazy path). */
  estargz?: boolean;
  /** Has CRIU and cuda-checkpoint (the restore path). */
  restore?: boolean;
}

interface SimReplica {
  containerId: string;
  state: AgentReplicaState;
  deploymentKey: string;
  snapshotBytes: number;
  /** A sleeping replica's level (1: weights in host RAM, 2: discarded). */
  sleepLevel?: 1 | 2;
}

interface SimSnapshot {
  /** The checkpoint image's manifest digest, as a capture would report it. */
  digest: string;
  bytes: number;
  gpuModel: string;
  driverVersion: string | undefined;
  cudaVersion: string | undefined;
}

const FIRST_PHASE: Record<StartPath, Phase> = {
  warm: "handover",
  wake: "load_weights",
  restore: "restore",
  peer: "pull",
  lazy: "prefetch",
  pull: "pull",
};

/** A peer start mounts the eStargz variant when the scheduler said so. */
function peerLazyImage(request: StartReplicaRequest): boolean {
  return request.peerSource?.lazyImage === true && request.deployment.estargzImageRef !== undefined;
}

export class SimRuntime implements Runtime {
  readonly kind = "sim" as const;
  private readonly images = new Map<string, { bytes: number; estargz: boolean }>();
  private readonly snapshots = new Map<string, SimSnapshot>();
  private readonly replicas = new Map<string, SimReplica>();
  /** Deployments whose compile / kernel caches this host kept from an earlier start. */
  private readonly warmCaches = new Set<string>();
  private readonly random: () => number;

  constructor(private readonly options: SimRuntimeOptions) {
    // The model's PRNG: one stream per host, one draw per start for its seed.
    this.random = mulberry32(options.seed);
  }

  /** Paths this host can serve at all, and why not the others. */
  capabilities(): { paths: StartPath[]; reasons: Partial<Record<StartPath, string>> } {
    const reasons: Partial<Record<StartPath, string>> = {};
    if (this.options.estargz === false)
      reasons.lazy = "this host does not run stargz-snapshotter, so it cannot start lazily";
    if (this.options.restore === false)
      reasons.restore = "this host has no CRIU / cuda-checkpoint, so it cannot restore snapshots";
    const paths = (["warm", "wake", "restore", "peer", "lazy", "pull"] as const).filter(
      (p) => !reasons[p],
    );
    return { paths, reasons };
  }

  /** Why this host cannot serve this start, beyond its capabilities (a sim-only check). */
  refusal(request: StartReplicaRequest): string | undefined {
    if (request.path !== "restore") return undefined;
    // Like containerd, a held checkpoint restores only as the bytes the control plane recorded.
    const wanted = request.deployment.snapshot;
    const held = wanted && this.snapshots.get(wanted.snapshotId);
    const wantedDigest = wanted?.checkpointRef.split("@")[1];
    if (held && held.digest !== wantedDigest)
      return `snapshot ${wanted.snapshotId} on this host is ${held.digest}, the start asks for ${wantedDigest}`;
    const binding = request.deployment.simulation?.snapshot;
    const { figures } = this.options;
    const mismatch = (what: string, want: string | undefined, have: string | undefined) =>
      want !== undefined && want !== have
        ? `${what} ${want} (this host: ${have ?? "none"})`
        : undefined;
    const problems = [
      mismatch("GPU", binding?.gpuModel, figures.gpuModel),
      mismatch("driver", binding?.driverVersion, figures.driverVersion),
      mismatch("CUDA", binding?.cudaVersion, figures.cudaVersion),
    ].filter(Boolean);
    return problems.length > 0
      ? `snapshot ${request.deployment.snapshot?.snapshotId} is not compatible with this host: captured on ${problems.join(", ")}`
      : undefined;
  }

  async startReplica(
    request: StartReplicaRequest,
    emit: EmitPhase,
    options: StartOptions = {},
  ): Promise<StartedReplica> {
    const t0 = performance.now();
    const { replicaId } = request;
    const fail = (message: string) =>
      new PhaseFailedError(FIRST_PHASE[request.path], new Date().toISOString(), 0, message);
    const existing = this.replicas.get(replicaId);
    const handoverToSelf = request.path === "warm" && request.warmReplicaId === replicaId;
    if (existing && !handoverToSelf)
      throw fail(`replica ${replicaId} already exists on this host (${existing.state})`);

    let parked: SimReplica | undefined;
    if (request.path === "warm") {
      parked = this.replicas.get(request.warmReplicaId ?? "");
      if (parked?.state !== "warm")
        throw fail(`no parked replica ${request.warmReplicaId} on this host to hand over`);
      this.replicas.delete(request.warmReplicaId ?? "");
    }
    if (request.path === "wake") {
      parked = this.replicas.get(request.sleepingReplicaId ?? "");
      if (parked?.state !== "sleeping")
        throw fail(`no sleeping replica ${request.sleepingReplicaId} on this host to wake`);
      this.replicas.delete(request.sleepingReplicaId ?? "");
    }
    const key = deploymentKey(request);
    const entry: SimReplica = {
      containerId: parked?.containerId ?? replicaId,
      state: "starting",
      deploymentKey: key,
      snapshotBytes: simulationOf(request).snapshot?.bytes ?? 3_400_000_000,
    };
    this.replicas.set(replicaId, entry);

    // A peer start mounts the eStargz variant when the scheduler said so, as lazy does.
    const estargz = request.path === "lazy" || (request.path === "peer" && peerLazyImage(request));
    const digest = imageDigestOf(request, estargz);
    const cached =
      (request.path === "pull" || request.path === "lazy" || request.path === "peer") &&
      this.images.has(digest);
    const snapshotId = request.deployment.snapshot?.snapshotId;
    const snapshotLocal = snapshotId !== undefined && this.snapshots.has(snapshotId);
    const result = this.simulate(request, cached, snapshotLocal, parked?.sleepLevel);
    // A simulated host pulls nothing: a registry credential is only noted as given, never kept.
    const registryCredential = (request.registryAuth?.length ?? 0) > 0;
    const warmCaches = this.warmCaches.has(key);
    // A peer start's caches come from its source; a pull or lazy one's from the store.
    const storedCache = request.kernelCache?.fetch;
    const attributes: Partial<Record<Phase, PhaseAttributes>> = {
      pull: { cached, registryCredential },
      prefetch: { cached, registryCredential },
      restore: { snapshotLocal },
      compile: { warmCaches, storedCache: storedCache !== undefined && !warmCaches },
      peer_transfer: {
        rdma: request.peerSource?.rdma ?? false,
        ...(request.path === "restore" ? { weightsFrom: "peer" } : {}),
      },
      fetch_kernel_cache:
        request.path === "peer"
          ? { stored: false, fromPeer: true }
          : { stored: true, ...(storedCache ? { kernelCacheId: storedCache.kernelCacheId } : {}) },
    };
    try {
      await this.replay(result, attributes, emit, options.signal);
    } catch (error) {
      this.replicas.delete(replicaId);
      throw error;
    }
    entry.state = "running";
    if (request.path === "pull" || request.path === "lazy" || request.path === "peer") {
      this.images.set(digest, { bytes: imageBytesOf(request), estargz });
      // Compiled here, or (peer) the source's kernel caches installed.
      this.warmCaches.add(key);
    }
    const snapshot = request.deployment.snapshot;
    if (request.path === "restore" && snapshot && !this.snapshots.has(snapshot.snapshotId)) {
      const fetched = snapshot.checkpointRef.split("@")[1]!;
      this.snapshots.set(snapshot.snapshotId, this.snapshotHere(entry.snapshotBytes, fetched));
    }
    return {
      replicaId,
      containerId: entry.containerId,
      path: request.path,
      seconds: (performance.now() - t0) / 1000,
      readiness: { status: 200, attempts: 1 },
    };
  }

  async stopReplica(replicaId: string): Promise<StoppedReplica> {
    const found = this.replicas.delete(replicaId);
    return Promise.resolve({ replicaId, found, signal: found ? "SIGTERM" : null, seconds: 0 });
  }

  async parkReplica(input: ParkReplicaRequestInput): Promise<void> {
    const request = ParkReplicaRequest.parse(input);
    const replica = this.replicas.get(request.replicaId);
    if (!replica || replica.state === "starting") {
      throw new Error(`replica ${request.replicaId} is not running on this host`);
    }
    if (request.gpus === "release") {
      // Its engine sleeps: the wake path's physics reads the level it slept at.
      replica.state = "sleeping";
      replica.sleepLevel = request.sleepLevel!;
    } else replica.state = "warm";
    return Promise.resolve();
  }

  /** Checkpoint written to local disk, then pushed to the snapshot store; the replica stops. */
  async captureSnapshot(request: CaptureSnapshotRequest): Promise<CapturedSnapshot> {
    const replica = this.replicas.get(request.replicaId);
    if (!replica || replica.state !== "running") {
      throw new Error(`replica ${request.replicaId} is not running on this host`);
    }
    const { profile } = this.options;
    const bytes = replica.snapshotBytes;
    const seconds =
      bytes / (profile.disk.writeMiBps * 2 ** 20) +
      (request.push ? bytes / ((profile.registryNetworkGbps * 1e9) / 8) : 0);
    await this.options.clock.sleep(seconds);
    // A simulated checkpoint's manifest: its digest names what was written, as a real one does.
    const digest = `sha256:${createHash("sha256")
      .update(JSON.stringify([request.checkpointRef, request.snapshotId, bytes, this.options.seed]))
      .digest("hex")}`;
    this.snapshots.set(request.snapshotId, this.snapshotHere(bytes, digest));
    this.replicas.delete(request.replicaId);
    return {
      snapshotId: request.snapshotId,
      checkpointRef: request.checkpointRef,
      digest,
      seconds,
      pushed: request.push,
    };
  }

  /**
   * The kernel cache a running replica compiled, packed to local disk and pushed to the store
   * (one uncompressed layer: the disk's write rate, then the registry link), as the containerd
   * runtime does. Its size is the model's assumed cache size; its digest names what was
   * written, as a real manifest digest does.
   */
  async captureKernelCache(
    replicaId: string,
    _request: StartReplicaRequest,
    capture: KernelCacheCapture,
    options: { signal?: AbortSignal } = {},
  ): Promise<CapturedKernelCache> {
    const replica = this.replicas.get(replicaId);
    if (!replica || replica.state !== "running") {
      throw new Error(`replica ${replicaId} is not running on this host`);
    }
    const { profile } = this.options;
    const bytes = PHYSICS.defaultKernelCacheBytes;
    const seconds =
      bytes / (profile.disk.writeMiBps * 2 ** 20) +
      bytes / ((profile.registryNetworkGbps * 1e9) / 8);
    await this.options.clock.sleep(seconds, options.signal);
    const digest = `sha256:${createHash("sha256")
      .update(JSON.stringify([capture.ref, capture.kernelCacheId, bytes, this.options.seed]))
      .digest("hex")}`;
    return { digest, bytes };
  }

  async inventory(): Promise<RuntimeInventory> {
    return Promise.resolve(this.inventoryNow());
  }

  /** The same, synchronously: a thousand hosts heartbeat from one loop. */
  inventoryNow(): RuntimeInventory {
    const replicas = [...this.replicas].map(([replicaId, r]) => ({
      replicaId,
      containerId: r.containerId,
      state: r.state,
    }));
    return {
      images: [...this.images].map(([digest, image]) => ({ digest, ...image })),
      snapshotIds: [...this.snapshots.keys()],
      warmReplicaIds: replicas.filter((r) => r.state === "warm").map((r) => r.replicaId),
      sleepingReplicaIds: replicas.filter((r) => r.state === "sleeping").map((r) => r.replicaId),
      replicas,
    };
  }

  private snapshotHere(bytes: number, digest: string): SimSnapshot {
    const { figures } = this.options;
    return {
      digest,
      bytes,
      gpuModel: figures.gpuModel,
      driverVersion: figures.driverVersion,
      cudaVersion: figures.cudaVersion,
    };
  }

  private simulate(
    request: StartReplicaRequest,
    cached: boolean,
    snapshotLocal: boolean,
    sleepLevel: 1 | 2 | undefined,
  ): ColdStartResult {
    const scenario = buildScenario(
      this.options.profile,
      request,
      {
        warmCaches: this.warmCaches.has(deploymentKey(request)),
        snapshotLocal,
        ...(this.options.figures.restoreStreams
          ? { restoreStreams: this.options.figures.restoreStreams }
          : {}),
        ...(this.options.figures.gpuMemoryService ? { gpuMemoryService: true } : {}),
        ...(sleepLevel ? { sleepLevel } : {}),
      },
      Math.floor(this.random() * 2 ** 31),
    );
    const failures = this.options.failures ?? {};
    if (!cached) return simulateColdStart(scenario, failures);
    const resolveSeconds =
      PHYSICS.registrySetupRoundTrips * (this.options.figures.registryRttMs / 1000);
    if (request.path === "peer") {
      // The image is here (read as a local one); the weights and caches still come from the peer.
      const peer = simulateColdStart(
        { ...scenario, image: { ...scenario.image, format: "oci" } },
        { ...failures, pullStallProbability: 0 },
      );
      const phases = peer.phases.map((timing) =>
        timing.phase === "pull"
          ? { phase: "pull" as const, seconds: resolveSeconds, bytes: 0 }
          : timing,
      );
      return { ...peer, phases, totalSeconds: phases.reduce((s, p) => s + p.seconds, 0) };
    }
    // Everything is on local disk: the model's pull with the fetch skipped (nothing can
    // stall). A cached eStargz image reads its landmark files from the local cache.
    const local = simulateColdStart(
      { ...scenario, path: "pull", image: { ...scenario.image, format: "oci" } },
      { ...failures, pullStallProbability: 0 },
    );
    const fetchPhase: Phase = request.path === "lazy" ? "prefetch" : "pull";
    const phases = local.phases.map((timing) =>
      timing.phase === "pull" ? { phase: fetchPhase, seconds: resolveSeconds, bytes: 0 } : timing,
    );
    return {
      ...local,
      path: request.path,
      phases,
      totalSeconds: phases.reduce((s, p) => s + p.seconds, 0),
    };
  }

  private async replay(
    result: ColdStartResult,
    extra: Partial<Record<Phase, PhaseAttributes>>,
    emit: EmitPhase,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const { clock } = this.options;
    const last = result.phases.length - 1;
    for (const [index, timing] of result.phases.entries()) {
      const startedAt = new Date();
      const t0 = performance.now();
      try {
        if (timing.seconds > 0) await clock.sleep(timing.seconds, signal);
        else signal?.throwIfAborted();
      } catch (error) {
        throw new PhaseFailedError(
          timing.phase,
          startedAt.toISOString(),
          Math.min(timing.seconds, clock.simulatedSince(t0)),
          error instanceof Error ? error.message : String(error),
          { cause: error },
        );
      }
      if (result.failure && index === last) {
        throw new PhaseFailedError(
          timing.phase,
          startedAt.toISOString(),
          timing.seconds,
          result.failure.message,
        );
      }
      const attributes = { simulated: true, timeFactor: clock.timeFactor, ...extra[timing.phase] };
      emit({
        phase: timing.phase,
        startedAt: startedAt.toISOString(),
        endedAt: new Date().toISOString(),
        seconds: timing.seconds,
        bytes: timing.bytes,
        attributes,
      });
    }
  }
}

/** A host's seed from the fleet seed and its name (FNV-1a), so hosts draw independent noise. */
export function hostSeed(fleetSeed: number, hostName: string): number {
  let hash = 0x811c9dc5 ^ (fleetSeed >>> 0);
  for (let i = 0; i < hostName.length; i++) {
    hash ^= hostName.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
