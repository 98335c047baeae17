import {
  type AgentInventory,
  type CaptureSnapshotRequest,
  type CaptureSnapshotResponse,
  type HostFigures,
  type ParkReplicaRequest,
  type ParkReplicaResponse,
  type StartReplicaRequest,
  type StartReplicaResponse,
  type StopReplicaResponse,
} from "@thaw/protocol";
import { GpuLedger } from "./gpu-ledger.ts";
import { describeHostInventory, readRuntimeInventory } from "./host-inventory.ts";
import { type HostRuntime } from "./host-runtime.ts";
import {
  type HostIdentity,
  type HostReport,
  Membership,
  type MembershipDeps,
  type MembershipStatus,
} from "./membership.ts";
import { ReplicaLifecycle, type ReplicaLifecycleDeps } from "./replica-lifecycle.ts";
import { ShutdownGate } from "./shutdown-gate.ts";
import { SnapshotCaptures } from "./snapshot-captures.ts";

export { type MembershipStatus } from "./membership.ts";
export { type TelemetrySink } from "./replica-lifecycle.ts";

export type HostAgentDeps = MembershipDeps &
  Pick<ReplicaLifecycleDeps, "telemetry"> &
  Omit<HostIdentity, "name" | "runtime" | "figures">;

/**
 * One host as the control plane and the scheduler see it, composed of its parts: its
 * membership (join, heartbeat, credential), the GPU ledger, the replicas' lifecycle, snapshot
 * captures, the inventory, and the gate that shuts when the agent stops.
 */
export class HostAgent {
  private readonly membership: Membership;
  private readonly gpus: GpuLedger;
  private readonly replicas: ReplicaLifecycle;
  private readonly snapshots: SnapshotCaptures;
  private readonly gate = new ShutdownGate();

  constructor(
    readonly name: string,
    readonly figures: HostFigures,
    readonly runtime: HostRuntime,
    deps: HostAgentDeps,
  ) {
    const { client, credentials, tokens, log, metrics, callKeys, telemetry, ...identity } = deps;
    this.membership = new Membership(
      { ...identity, name, runtime: runtime.kind, figures },
      { client, credentials, tokens, log, metrics, callKeys },
    );
    this.gpus = new GpuLedger(figures.gpuCount);
    this.replicas = new ReplicaLifecycle({
      hostName: name,
      runtime,
      gpus: this.gpus,
      gate: this.gate,
      telemetry,
      log,
      metrics,
    });
    this.snapshots = new SnapshotCaptures(runtime, this.replicas, this.gate);
  }

  // --- membership --------------------------------------------------------------------------

  get status(): MembershipStatus {
    return this.membership.status;
  }

  get nodeId(): string | undefined {
    return this.membership.nodeId;
  }

  get lastError(): string | undefined {
    return this.membership.lastError;
  }

  get credential(): string | undefined {
    return this.membership.credential;
  }

  /** Whether a call signed with this key (its text) may act on this host. */
  trustsCallKey(key: string): boolean {
    return this.membership.trustsCallKey(key);
  }

  /** Joins if needed, then heartbeats. Never throws: the outcome is in `status`/`lastError`. */
  async tick(): Promise<void> {
    await this.membership.tick(() => this.report());
    this.replicas.pruneTombstones();
  }

  private async report(): Promise<HostReport> {
    const inventory = await readRuntimeInventory(this.runtime);
    return {
      gpusFree: this.gpus.free,
      gpusUsed: this.gpus.used,
      inventory: {
        images: inventory.images,
        snapshotIds: inventory.snapshotIds,
        warmReplicaIds: inventory.warmReplicaIds,
        sleepingReplicaIds: inventory.sleepingReplicaIds,
      },
    };
  }

  // --- the scheduler's commands ------------------------------------------------------------

  /** Accepts a start and runs it in the background (ReplicaLifecycle.start says how). */
  startReplica(request: StartReplicaRequest): StartReplicaResponse {
    return this.replicas.start(request);
  }

  parkReplica(request: ParkReplicaRequest): Promise<ParkReplicaResponse> {
    return this.replicas.park(request);
  }

  /** Stops a replica (aborting its start if it is still starting). Idempotent. */
  stopReplica(replicaId: string): Promise<StopReplicaResponse> {
    return this.replicas.stop(replicaId);
  }

  /** Captures a snapshot of a running replica, which then stops. Idempotent on the snapshot id. */
  captureSnapshot(request: CaptureSnapshotRequest): Promise<CaptureSnapshotResponse> {
    return this.snapshots.capture(request);
  }

  inventory(): Promise<AgentInventory> {
    return describeHostInventory({
      name: this.name,
      nodeId: this.nodeId,
      runtime: this.runtime,
      gpus: this.gpus,
      replicas: this.replicas,
    });
  }

  get gpusUsed(): number {
    return this.gpus.used;
  }

  // --- shutdown ---------------------------------------------------------------------------

  get isDraining(): boolean {
    return this.gate.isShut;
  }

  /** Refuses new starts (and captures) from now on. */
  drain(): void {
    this.gate.shutNow();
  }

  /** Starts still running, and kernel-cache captures still packing or pushing. */
  inFlight(): Promise<void>[] {
    return this.replicas.inFlight();
  }

  /**
   * Hands back every start still running: each reports a failed outcome with this reason.
   * Kernel-cache captures still running are stopped, reporting nothing.
   */
  abortStarts(reason: string): Promise<void>[] {
    return this.replicas.abortStarts(reason);
  }
}
