import { ControlPlaneError, type ControlPlaneClient } from "@thaw/node-agent-client";
import {
  AGENT_PROTOCOL_VERSION,
  type AgentErrorCode,
  type AgentInventory,
  type AgentReplicaState,
  type CaptureSnapshotRequest,
  type CaptureSnapshotResponse,
  type ColdStartOutcomeReport,
  type EndedAgentReplicaState,
  type HostFigures,
  type NodeProvider,
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
import { type AgentCallKeys } from "../api/agent-call-auth.ts";
import { type CredentialStore } from "../credential-store.ts";
import { type JoinTokenSource } from "../join-tokens.ts";
import { type AgentMetrics } from "../metrics.ts";
import { type EmitPhase, PhaseFailedError, type RuntimeInventory } from "../runtimes/runtime.ts";
import { type HostRuntime } from "./host-runtime.ts";

export const AGENT_VERSION = "0.2.0";

export type MembershipStatus = "unjoined" | "joined" | "waiting-for-token" | "rejected";

/** Where phase events and outcomes go (the telemetry pipeline). */
export interface TelemetrySink {
  event(host: string, event: PhaseEventReport): void;
  outcome(host: string, outcome: ColdStartOutcomeReport): void;
}

export interface HostAgentDeps {
  client: ControlPlaneClient;
  credentials: CredentialStore;
  tokens: JoinTokenSource;
  telemetry: TelemetrySink;
  log: Logger;
  metrics?: AgentMetrics;
  /** This host's base URL for the scheduler (joined as `agentUrl`). */
  agentUrl?: string;
  /** SHA-256 of the agent's TLS certificate, pinned at join with agentUrl. */
  certSha256?: string;
  /** The scheduler keys the process trusts; the join answer's key is added to them. */
  callKeys?: AgentCallKeys;
  provider?: NodeProvider;
  zone?: string;
  /** The provider's id of this host (EC2 instance id); default `{runtime}-{name}`. */
  instanceId?: string;
}

/** A start this host accepted: while it runs (or holds GPUs), then remembered for a while. */
interface ReplicaRecord {
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
  restore: "restore",
  lazy: "prefetch",
  pull: "pull",
};

/**
 * One host as the control plane and the scheduler see it: it joins and heartbeats (its
 * figures, GPUs and inventory), and serves the scheduler's commands on its runtime —
 * acknowledging a start at once, running it in the background and streaming its phases.
 */
export class HostAgent {
  status: MembershipStatus = "unjoined";
  nodeId: string | undefined;
  lastError: string | undefined;
  private credentialValue: string | undefined;
  /** The credential the control plane stopped taking: proof of identity when joining again. */
  private staleCredential: string | undefined;
  /** The scheduler's public key this host's calls must be signed with (from its join). */
  private callKey: string | undefined;
  /** A rotation was asked for and the new credential is being fetched. */
  private renewing: Promise<void> | undefined;
  private draining = false;
  private readonly replicas = new Map<string, ReplicaRecord>();
  private readonly captures = new Map<string, Promise<CaptureSnapshotResponse>>();
  /** GPU index → replica holding it. */
  private readonly gpuHolders = new Map<number, string>();

  constructor(
    readonly name: string,
    readonly figures: HostFigures,
    readonly runtime: HostRuntime,
    private readonly deps: HostAgentDeps,
  ) {
    const stored = deps.credentials.get(name);
    if (stored && stored.agentCallPublicKey && stored.certSha256 === deps.certSha256) {
      this.nodeId = stored.nodeId;
      this.setCredential(stored.credential);
      this.callKey = deps.callKeys?.accept(stored.agentCallPublicKey);
      this.status = "joined";
    } else if (stored) {
      // Joined by an older agent (no scheduler key) or with another certificate: the
      // scheduler could not call it, so it joins again, proving it is that node.
      this.nodeId = stored.nodeId;
      this.staleCredential = stored.credential;
    }
  }

  /** Whether a call signed with this key (its text) may act on this host. */
  trustsCallKey(key: string): boolean {
    return this.callKey !== undefined && this.callKey === key;
  }

  get credential(): string | undefined {
    return this.credentialValue;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  // --- membership --------------------------------------------------------------------------

  /** Joins if needed, then heartbeats. Never throws: the outcome is in `status`/`lastError`. */
  async tick(): Promise<void> {
    try {
      if (!this.credentialValue) await this.join();
      if (this.credentialValue) await this.heartbeat(this.credentialValue);
      this.lastError = undefined;
    } catch (error) {
      this.lastError = error instanceof Error ? error.message : String(error);
      if (error instanceof ControlPlaneError && error.status === 401 && this.status === "joined") {
        // The control plane no longer takes this credential (node deleted, terminated or
        // revoked): join again with a fresh token when one is available, presenting the old
        // credential (it proves nothing once revoked: then only a token made for this node
        // does). It stays on disk until a join replaces it, so a restart in between can still
        // present it.
        this.staleCredential = this.credentialValue;
        this.setCredential(undefined);
        this.status = "unjoined";
      }
    }
    this.pruneTombstones();
  }

  private setCredential(credential: string | undefined): void {
    this.credentialValue = credential;
  }

  private async join(): Promise<void> {
    const token = this.deps.tokens.take();
    if (!token) {
      this.status = "waiting-for-token";
      return;
    }
    try {
      const joined = await this.deps.client.join({
        joinToken: token,
        protocolVersion: AGENT_PROTOCOL_VERSION,
        name: this.name,
        provider: this.deps.provider ?? "sim",
        runtime: this.runtime.kind,
        instanceId: this.deps.instanceId ?? `${this.runtime.kind}-${this.name}`,
        zone: this.deps.zone ?? "sim-a",
        agentVersion: AGENT_VERSION,
        ...(this.deps.agentUrl ? { agentUrl: this.deps.agentUrl } : {}),
        ...(this.deps.agentUrl && this.deps.certSha256
          ? { agentCertSha256: this.deps.certSha256 }
          : {}),
        ...(this.staleCredential ? { nodeCredential: this.staleCredential } : {}),
        figures: this.figures,
      });
      this.staleCredential = undefined;
      this.nodeId = joined.nodeId;
      this.setCredential(joined.credential);
      this.callKey = this.deps.callKeys?.accept(joined.agentCallPublicKey);
      this.status = "joined";
      this.deps.credentials.set(this.name, {
        nodeId: joined.nodeId,
        credential: joined.credential,
        agentCallPublicKey: joined.agentCallPublicKey,
        ...(this.deps.certSha256 ? { certSha256: this.deps.certSha256 } : {}),
      });
      this.deps.metrics?.joins.inc({ result: "joined" });
    } catch (error) {
      this.deps.metrics?.joins.inc({ result: "failed" });
      if (error instanceof ControlPlaneError && !error.retryable) this.status = "rejected";
      // Unreachable or a server-side failure: the token was not spent, keep it for a retry.
      else this.deps.tokens.putBack(token);
      throw error;
    }
  }

  private async heartbeat(credential: string): Promise<void> {
    const inventory = await this.runtimeInventory();
    const used = this.gpuHolders.size;
    try {
      const answer = await this.deps.client.heartbeat(credential, {
        agentVersion: AGENT_VERSION,
        gpusFree: Math.max(0, this.figures.gpuCount - used),
        gpusUsed: used,
        figures: this.figures,
        inventory: {
          images: inventory.images,
          snapshotIds: inventory.snapshotIds,
          warmReplicaIds: inventory.warmReplicaIds,
        },
      });
      this.deps.metrics?.heartbeats.inc({ result: "sent" });
      if (answer.rotateCredential) this.renewing ??= this.renewCredential(credential);
    } catch (error) {
      this.deps.metrics?.heartbeats.inc({ result: "failed" });
      throw error;
    }
  }

  /**
   * An operator rotated this node's credential: fetch the new one with the current one, keep
   * it on disk first, then use it (its first use retires the old one at the control plane).
   * A failure keeps the current credential, which still works; the next heartbeat asks again.
   */
  private async renewCredential(current: string): Promise<void> {
    try {
      const renewed = await this.deps.client.renewCredential(current);
      const stored = this.deps.credentials.get(this.name);
      if (stored && this.credentialValue === current) {
        this.deps.credentials.set(this.name, { ...stored, credential: renewed.credential });
        this.setCredential(renewed.credential);
        this.deps.log.info({ host: this.name, nodeId: this.nodeId }, "credential rotated");
      }
    } catch (error) {
      this.deps.log.warn(
        { host: this.name, err: error instanceof Error ? error.message : String(error) },
        "credential rotation failed; retrying at the next heartbeat",
      );
    } finally {
      this.renewing = undefined;
    }
  }

  private runtimeInventory(): Promise<RuntimeInventory> {
    return this.runtime.inventoryNow
      ? Promise.resolve(this.runtime.inventoryNow())
      : this.runtime.inventory();
  }

  // --- the scheduler's commands ------------------------------------------------------------

  /**
   * Accepts a start and runs it in the background. Idempotent: the same (replica, cold
   * start) again gets the same answer and no second run. Throws AgentError 409 when this
   * host cannot serve it, 503 while shutting down.
   */
  startReplica(request: StartReplicaRequest): StartReplicaResponse {
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
    if (this.draining)
      throw new AgentError("shutting_down", "the agent is shutting down and accepts no new starts");
    const handoverToSelf = request.path === "warm" && request.warmReplicaId === request.replicaId;
    if (
      existing &&
      (existing.state === "starting" ||
        existing.state === "running" ||
        (existing.state === "warm" && !handoverToSelf))
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
    if (request.path === "warm" && request.warmReplicaId !== undefined) {
      // The parked replica becomes this one: its GPUs with it.
      const source = this.replicas.get(request.warmReplicaId);
      if (source) {
        this.release(source);
        this.replicas.delete(source.replicaId);
      }
    }
    this.replicas.set(request.replicaId, record);
    for (const gpu of gpus) this.gpuHolders.set(gpu, request.replicaId);
    this.deps.metrics?.starts.inc({ path: request.path, outcome: "accepted" });
    this.deps.metrics?.startsInFlight.inc();
    record.done = this.run(record, request);
    return record.answer;
  }

  /** Checks that this host can serve the start; returns the GPUs it will hold. */
  private admit(request: StartReplicaRequest): number[] {
    const refuse = (code: AgentErrorCode, message: string, field?: string): never => {
      this.deps.metrics?.starts.inc({ path: request.path, outcome: "refused" });
      throw new AgentError(code, message, field);
    };
    const capabilities = this.runtime.capabilities?.();
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
    const refusal = this.runtime.refusal?.(request);
    if (refusal)
      refuse(
        "path_infeasible",
        refusal,
        request.path === "restore" ? "deployment.snapshot" : "path",
      );
    for (const gpu of gpus) {
      if (gpu >= this.figures.gpuCount) {
        refuse(
          "gpu_unavailable",
          `GPU ${gpu} does not exist on this host (${this.figures.gpuCount} GPUs)`,
          "gpus",
        );
      }
      const holder = this.gpuHolders.get(gpu);
      if (
        holder !== undefined &&
        holder !== request.warmReplicaId &&
        holder !== request.replicaId
      ) {
        refuse("gpu_busy", `GPU ${gpu} is held by replica ${holder}`, "gpus");
      }
    }
    return [...gpus];
  }

  private async run(record: ReplicaRecord, request: StartReplicaRequest): Promise<void> {
    let sequence = 0;
    const { coldStartId, path } = record;
    const emit: EmitPhase = (event) => {
      this.deps.telemetry.event(this.name, {
        coldStartId,
        sequence: ++sequence,
        ...event,
        attributes: event.attributes ?? {},
      });
      this.deps.metrics?.phaseSeconds.observe({ path, phase: event.phase }, event.seconds);
    };
    try {
      await this.runtime.startReplica(request, emit, { signal: record.abort.signal });
      record.state = "running";
      this.deps.telemetry.outcome(this.name, {
        coldStartId,
        status: "succeeded",
        endedAt: new Date().toISOString(),
      });
      this.deps.metrics?.starts.inc({ path, outcome: "succeeded" });
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
      this.deps.telemetry.outcome(this.name, {
        coldStartId,
        status: "failed",
        failedPhase: failure.phase,
        error: failure.message.slice(0, 4_000),
        endedAt: new Date().toISOString(),
      });
      record.state = "failed";
      record.endedAt = Date.now();
      this.release(record);
      this.deps.metrics?.starts.inc({ path, outcome: "failed" });
      this.deps.log.info(
        { host: this.name, replicaId: record.replicaId, coldStartId, path, error: message },
        "start failed",
      );
    } finally {
      this.deps.metrics?.startsInFlight.dec();
    }
  }

  async parkReplica(request: ParkReplicaRequest): Promise<ParkReplicaResponse> {
    const record = this.requireReplica(request.replicaId);
    if (record.state === "warm") return { replicaId: record.replicaId, state: "warm" };
    if (record.state !== "running") {
      throw new AgentError(
        "replica_not_running",
        `replica ${request.replicaId} is ${record.state}, not running`,
        "replicaId",
      );
    }
    await this.runtime.parkReplica(request);
    record.state = "warm";
    return { replicaId: record.replicaId, state: "warm" };
  }

  /** Stops a replica (aborting its start if it is still starting). Idempotent. */
  async stopReplica(replicaId: string): Promise<StopReplicaResponse> {
    const record = this.replicas.get(replicaId);
    const wasActive =
      record !== undefined && record.state !== "stopped" && record.state !== "failed";
    if (record?.state === "starting") {
      record.abort.abort(new Error("stopped by the scheduler"));
      await record.done;
    }
    const stopped = await this.runtime.stopReplica(replicaId);
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

  /** Captures a snapshot of a running replica, which then stops. Idempotent on the snapshot id. */
  captureSnapshot(request: CaptureSnapshotRequest): Promise<CaptureSnapshotResponse> {
    const known = this.captures.get(request.snapshotId);
    if (known) return known;
    if (this.draining) throw new AgentError("shutting_down", "the agent is shutting down");
    const record = this.requireReplica(request.replicaId);
    if (record.state !== "running") {
      throw new AgentError(
        "replica_not_running",
        `replica ${request.replicaId} is ${record.state}, not running`,
        "replicaId",
      );
    }
    if (this.runtime.capabilities && !this.runtime.capabilities().paths.includes("restore")) {
      throw new AgentError(
        "path_unsupported",
        "this host has no CRIU / cuda-checkpoint, so it cannot capture snapshots",
      );
    }
    const capture = this.runtime.captureSnapshot(request).then((captured) => {
      this.release(record);
      record.state = "stopped";
      record.endedAt = Date.now();
      return captured;
    });
    this.captures.set(request.snapshotId, capture);
    capture.catch(() => this.captures.delete(request.snapshotId));
    return capture;
  }

  async inventory(): Promise<AgentInventory> {
    const inventory = await this.runtimeInventory();
    const held = [...this.gpuHolders]
      .map(([index, replicaId]) => ({ index, replicaId }))
      .sort((a, b) => a.index - b.index);
    return {
      node: {
        name: this.name,
        nodeId: this.nodeId ?? null,
        runtime: this.runtime.kind,
        agentVersion: AGENT_VERSION,
      },
      gpus: {
        total: this.figures.gpuCount,
        free: Math.max(0, this.figures.gpuCount - held.length),
        used: held.length,
        held,
      },
      capabilities: {
        paths: this.runtime.capabilities?.().paths ?? ["warm", "restore", "lazy", "pull"],
      },
      images: inventory.images,
      snapshotIds: inventory.snapshotIds,
      warmReplicaIds: inventory.warmReplicaIds,
      replicas: inventory.replicas.map((replica) => {
        const record = this.replicas.get(replica.replicaId);
        return {
          ...replica,
          gpus: record?.gpus ?? [],
          ...(record ? { coldStartId: record.coldStartId, path: record.path } : {}),
        };
      }),
    };
  }

  // --- shutdown ---------------------------------------------------------------------------

  /** Refuses new starts from now on. */
  drain(): void {
    this.draining = true;
  }

  /** Starts still running. */
  inFlight(): Promise<void>[] {
    return [...this.replicas.values()].filter((r) => r.state === "starting").map((r) => r.done);
  }

  /** Hands back every start still running: each reports a failed outcome with this reason. */
  abortStarts(reason: string): Promise<void>[] {
    const running = [...this.replicas.values()].filter((r) => r.state === "starting");
    for (const record of running) record.abort.abort(new Error(reason));
    return running.map((r) => r.done);
  }

  get gpusUsed(): number {
    return this.gpuHolders.size;
  }

  private requireReplica(replicaId: string): ReplicaRecord {
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
    for (const gpu of record.gpus) {
      if (this.gpuHolders.get(gpu) === record.replicaId) this.gpuHolders.delete(gpu);
    }
  }

  private pruneTombstones(): void {
    const before = Date.now() - TOMBSTONE_MS;
    for (const [id, record] of this.replicas) {
      if (record.endedAt !== undefined && record.endedAt < before) this.replicas.delete(id);
    }
  }
}

function deploymentKeyOf(request: StartReplicaRequest): string {
  const { deployment } = request;
  return deployment.deploymentId ?? deployment.imageDigest ?? deployment.imageRef;
}

function sameSet(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}
