import { mkdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { type Phase, type StartPath } from "@thaw/core/vocabulary";
import {
  type AgentReplicaState,
  CaptureSnapshotRequest,
  type CaptureSnapshotRequestInput,
  type EngineHttpCall,
  KernelCacheInstruction,
  ParkReplicaRequest,
  type ParkReplicaRequestInput,
  StartReplicaRequest,
  type StartReplicaRequestInput,
} from "@thaw/protocol";
import { PhaseRecorder } from "../phase-recorder.ts";
import { engineCall } from "../replica-http.ts";
import {
  type CapturedKernelCache,
  type CapturedSnapshot,
  type EmitPhase,
  type KernelCacheCapture,
  PhaseFailedError,
  type Runtime,
  type RuntimeInventory,
  type StartedReplica,
  type StartOptions,
  type StoppedReplica,
} from "../runtime.ts";
import { LABEL_ESTARGZ, LABEL_KERNEL_CACHE, LABEL_SNAPSHOT } from "./commands.ts";
import { type ContainerdRuntimeConfig, resolveContainerdConfig } from "./config.ts";
import { ContainerdHost } from "./host.ts";
import { ensureKernelCacheDir, packAndPushKernelCache } from "./kernel-cache.ts";
import { startLazily } from "./lazy-path.ts";
import { parseImageList } from "./parse.ts";
import { peerRefusal, restoreFromPeerRefusal } from "./model-express.ts";
import { startByPeer } from "./peer-path.ts";
import { startByPull } from "./pull-path.ts";
import { startByRestore } from "./restore-path.ts";
import { captureCheckpoint } from "./snapshot-capture.ts";
import { type PathOutcome, type StartContext } from "./start-context.ts";
import { startWake } from "./wake-path.ts";
import { startWarm } from "./warm-path.ts";

interface ReplicaEntry {
  containerId: string;
  state: AgentReplicaState;
  port: number;
  engineWake?: EngineHttpCall;
  /** A sleeping replica's level, and its calls after the wake (level 2). */
  sleepLevel?: 1 | 2;
  engineAfterWake?: EngineHttpCall[];
}

/** The phase a path starts with: where a failure before any phase is reported. */
const FIRST_PHASE: Record<StartPath, Phase> = {
  warm: "handover",
  wake: "load_weights",
  restore: "restore",
  peer: "pull",
  lazy: "prefetch",
  pull: "pull",
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The real runtime: drives containerd through `ctr` (and `ctr-remote`, `criu`,
 * `cuda-checkpoint`). One instance per node; it remembers the replicas it started.
 */
export class ContainerdRuntime implements Runtime {
  readonly kind = "containerd" as const;
  readonly host: ContainerdHost;
  private readonly replicas = new Map<string, ReplicaEntry>();
  /** Stops in progress: a second stop of the same replica (a client retry) waits for the first. */
  private readonly stopping = new Map<string, Promise<StoppedReplica>>();
  private restoreChecked = false;
  private readonly imageBytesCache = new Map<string, number>();

  constructor(config: ContainerdRuntimeConfig) {
    this.host = new ContainerdHost(resolveContainerdConfig(config));
  }

  /** Why this host cannot serve this start (answered 409 before anything runs), if it cannot. */
  refusal(request: StartReplicaRequest): string | undefined {
    if (request.path === "peer") return peerRefusal(this.host.config.modelExpress, request);
    if (request.path === "restore" && request.peerSource)
      return restoreFromPeerRefusal(this.host.config.modelExpress, request);
    return undefined;
  }

  async startReplica(
    input: StartReplicaRequestInput,
    emit: EmitPhase,
    options: StartOptions = {},
  ): Promise<StartedReplica> {
    // Parsed again here: this is where request strings become command-line arguments.
    const request = StartReplicaRequest.parse(input);
    const { replicaId } = request;
    const t0 = performance.now();
    const fail = (message: string) =>
      new PhaseFailedError(FIRST_PHASE[request.path], new Date().toISOString(), 0, message);

    const existing = this.replicas.get(replicaId);
    const handoverToSelf =
      (request.path === "warm" && request.warmReplicaId === replicaId) ||
      (request.path === "wake" && request.sleepingReplicaId === replicaId);
    if (existing && !handoverToSelf) {
      throw fail(`replica ${replicaId} already exists on this node (${existing.state})`);
    }
    let parked: ReplicaEntry | undefined;
    if (request.path === "warm") {
      const sourceId = request.warmReplicaId ?? "";
      parked = this.replicas.get(sourceId);
      if (!parked || parked.state !== "warm") {
        throw fail(`no parked replica ${sourceId} on this node to hand over`);
      }
      this.replicas.delete(sourceId);
    }
    if (request.path === "wake") {
      const sourceId = request.sleepingReplicaId ?? "";
      parked = this.replicas.get(sourceId);
      if (!parked || parked.state !== "sleeping" || !parked.engineWake || !parked.sleepLevel) {
        throw fail(`no sleeping replica ${sourceId} on this node to wake`);
      }
      this.replicas.delete(sourceId);
    }
    const entry: ReplicaEntry = {
      containerId: parked?.containerId ?? replicaId,
      state: "starting",
      port: request.readiness.port,
    };
    this.replicas.set(replicaId, entry);

    let createdId: string | undefined;
    const rec = new PhaseRecorder(emit);
    const ctx: StartContext = {
      host: this.host,
      request,
      rec,
      signal: options.signal,
      created: (id) => (createdId = id),
    };
    try {
      await mkdir(this.host.config.logDir, { recursive: true });
      // The deployment's kernel-cache directory is mounted into every container these paths
      // create (a restore's too: the checkpointed container had it), so it must exist first.
      if (request.path !== "warm" && request.path !== "wake")
        await ensureKernelCacheDir(this.host, request);
      let outcome: PathOutcome;
      switch (request.path) {
        case "pull":
          outcome = await startByPull(ctx);
          break;
        case "peer":
          outcome = await startByPeer(ctx);
          break;
        case "lazy":
          outcome = await startLazily(ctx);
          break;
        case "restore":
          outcome = await startByRestore(ctx, () => this.restorePreflight());
          break;
        case "wake":
          outcome = await startWake(ctx, {
            containerId: entry.containerId,
            port: parked!.port,
            sleepLevel: parked!.sleepLevel!,
            engineWake: parked!.engineWake!,
            ...(parked!.engineAfterWake ? { engineAfterWake: parked!.engineAfterWake } : {}),
          });
          break;
        case "warm":
          outcome = await startWarm(ctx, {
            containerId: entry.containerId,
            port: parked?.port ?? request.readiness.port,
            ...(parked?.engineWake ? { engineWake: parked.engineWake } : {}),
          });
          break;
      }
      await rec.flush();
      entry.state = "running";
      return {
        replicaId,
        containerId: outcome.containerId,
        path: request.path,
        seconds: (performance.now() - t0) / 1000,
        readiness: { status: outcome.probe.status, attempts: outcome.probe.attempts },
      };
    } catch (error) {
      await rec.flush();
      this.replicas.delete(replicaId);
      // A half-started replica holds GPUs and a port: remove it now, the scheduler retries.
      if (createdId) {
        await this.host
          .removeContainer(createdId, { graceSeconds: 0, force: true })
          .catch(() => undefined);
      }
      if (error instanceof PhaseFailedError) throw error;
      throw fail(error instanceof Error ? error.message : String(error));
    }
  }

  stopReplica(replicaId: string): Promise<StoppedReplica> {
    const inFlight = this.stopping.get(replicaId);
    if (inFlight) return inFlight;
    const stop = this.stopOnce(replicaId).finally(() => this.stopping.delete(replicaId));
    this.stopping.set(replicaId, stop);
    return stop;
  }

  private async stopOnce(replicaId: string): Promise<StoppedReplica> {
    const t0 = performance.now();
    const containerId = this.replicas.get(replicaId)?.containerId ?? replicaId;
    const result = await this.host.removeContainer(containerId, {
      graceSeconds: this.host.config.stopGraceSeconds,
    });
    this.replicas.delete(replicaId);
    await rm(this.host.logPath(containerId), { force: true });
    return { replicaId, ...result, seconds: (performance.now() - t0) / 1000 };
  }

  async parkReplica(input: ParkReplicaRequestInput): Promise<void> {
    const request = ParkReplicaRequest.parse(input);
    const parked = this.replicas.get(request.replicaId);
    if (request.gpus === "release" && parked?.state === "warm") {
      // A parked replica put to sleep when its keep-alive ends: thawed to take the call.
      await this.host.api.resumeTask(parked.containerId);
      parked.state = "running";
      // Already asleep since its park: it stays so (its GPU memory is already given back).
      if (parked.engineWake) return this.pauseAsleep(parked, request);
    }
    const entry = this.requireRunning(request.replicaId);
    if (request.engineSleep) {
      await engineCall(entry.port, request.engineSleep, {
        what: "put the engine to sleep",
        timeoutMs: this.host.config.timeouts.engineCallSeconds * 1000,
      });
    }
    if (request.gpus === "release") return this.pauseAsleep(entry, request);
    await this.host.run(this.host.ctr.taskPause(entry.containerId), "pause the task");
    if (request.engineWake) entry.engineWake = request.engineWake;
    entry.state = "warm";
  }

  /**
   * Asleep, its GPU memory given back (the lifecycle frees its GPUs in the ledger): paused, it
   * waits holding host memory for the wake path, which makes these calls.
   */
  private async pauseAsleep(entry: ReplicaEntry, request: ParkReplicaRequest): Promise<void> {
    await this.host.run(this.host.ctr.taskPause(entry.containerId), "pause the task");
    entry.engineWake ??= request.engineWake;
    entry.state = "sleeping";
    entry.sleepLevel = request.sleepLevel!;
    if (request.engineAfterWake) entry.engineAfterWake = request.engineAfterWake;
  }

  async captureSnapshot(input: CaptureSnapshotRequestInput): Promise<CapturedSnapshot> {
    const request = CaptureSnapshotRequest.parse(input);
    const entry = this.requireRunning(request.replicaId);
    const t0 = performance.now();
    await this.restorePreflight();
    const { pushed, digest } = await captureCheckpoint(
      this.host,
      entry.containerId,
      entry.port,
      request,
    );
    await this.stopReplica(request.replicaId);
    return {
      snapshotId: request.snapshotId,
      checkpointRef: request.checkpointRef,
      digest,
      pushed,
      seconds: (performance.now() - t0) / 1000,
    };
  }

  /**
   * Packs the deployment's kernel-cache directory and pushes it to `capture.ref`
   * (kernel-cache.ts). The directory outlives the replica, so the replica need not be running
   * any more; it must have started here.
   */
  async captureKernelCache(
    replicaId: string,
    input: StartReplicaRequestInput,
    capture: KernelCacheCapture,
    options: { signal?: AbortSignal } = {},
  ): Promise<CapturedKernelCache> {
    // Parsed again here: the ref becomes a command-line argument.
    const request = StartReplicaRequest.parse(input);
    const checked = KernelCacheInstruction.parse({ capture }).capture!;
    if (request.replicaId !== replicaId) {
      throw new Error(`the capture's start is of replica ${request.replicaId}, not ${replicaId}`);
    }
    return packAndPushKernelCache(this.host, request, checked, options.signal);
  }

  async inventory(): Promise<RuntimeInventory> {
    const listed = parseImageList(
      (await this.host.run(this.host.ctr.imageList(), "list the images")).stdout,
    );
    const tasks = await this.host.tasks();
    const images = new Map<string, RuntimeInventory["images"][number]>();
    const snapshotIds = new Set<string>();
    for (const image of listed) {
      const snapshotId = image.labels[LABEL_SNAPSHOT];
      if (snapshotId !== undefined) {
        if (UUID.test(snapshotId)) snapshotIds.add(snapshotId);
        continue;
      }
      // A kernel cache on its way in or out: no image a replica runs.
      if (image.labels[LABEL_KERNEL_CACHE] !== undefined) continue;
      if (images.has(image.digest)) continue;
      images.set(image.digest, {
        digest: image.digest,
        bytes: await this.imageBytes(image.digest),
        estargz: image.labels[LABEL_ESTARGZ] === "true",
      });
    }
    const replicas: RuntimeInventory["replicas"] = [];
    for (const [replicaId, entry] of this.replicas) {
      const task = tasks.get(entry.containerId);
      // A task that died on its own is no replica any more (the next stop cleans it up).
      if (entry.state !== "starting" && (!task || task.status === "STOPPED")) continue;
      replicas.push({ replicaId, containerId: entry.containerId, state: entry.state });
    }
    return {
      images: [...images.values()],
      snapshotIds: [...snapshotIds],
      warmReplicaIds: replicas.filter((r) => r.state === "warm").map((r) => r.replicaId),
      sleepingReplicaIds: replicas.filter((r) => r.state === "sleeping").map((r) => r.replicaId),
      replicas,
    };
  }

  private requireRunning(replicaId: string): ReplicaEntry {
    const entry = this.replicas.get(replicaId);
    if (!entry || entry.state !== "running") {
      throw new Error(
        `replica ${replicaId} is not running on this node (${entry?.state ?? "unknown"})`,
      );
    }
    return entry;
  }

  private async imageBytes(digest: string): Promise<number> {
    const cached = this.imageBytesCache.get(digest);
    if (cached !== undefined) return cached;
    try {
      const bytes = (await this.host.imageBlobs(digest)).totalBytes;
      this.imageBytesCache.set(digest, bytes); // digests are immutable
      return bytes;
    } catch {
      return 0; // content not (yet) complete locally: counted on a later heartbeat
    }
  }

  /** Once per runtime: the kernel settings and `criu check` that restore and capture depend on. */
  private async restorePreflight(): Promise<void> {
    if (this.restoreChecked) return;
    const ioUring = await readFile(
      path.join(this.host.config.procSysDir, "kernel", "io_uring_disabled"),
      "utf8",
    ).catch(() => undefined);
    if (ioUring !== undefined && ioUring.trim() !== "2") {
      throw new Error(
        `kernel.io_uring_disabled is ${ioUring.trim()}, CRIU needs 2 (no io_uring to checkpoint): install infra/agent/sysctl.d/90-thaw-restore.conf and run sysctl --system`,
      );
    }
    await this.host.run(this.host.criu.check(), "check the kernel's checkpoint/restore support", {
      hint: "Restore and capture need `criu check` to pass on this kernel (install CRIU >= 4.0; see infra/agent/README.md)",
    });
    this.restoreChecked = true;
  }
}
