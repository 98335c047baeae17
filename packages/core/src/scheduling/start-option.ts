import type { ScenarioEngine, ScenarioHost, ScenarioLayer } from "../cold-start-model/index";
import type { NodeState, Objective, SnapshotStatus, StartPath } from "../vocabulary/index";

// The plain snapshot of state the scheduling decisions read. Workers build it from
// Postgres (Node, NodeImage, NodeSnapshot, Replica, Snapshot, Deployment); the replay
// benchmark builds it from its simulated fleet. Nothing here is a database row on purpose:
// the decisions must not care where the state came from.

/**
 * What the node already holds for this option, the key of a history cell (ARCHITECTURE.md §5):
 * - `warm-replica`: an idle initialised replica of the deployment (path warm)
 * - `sleeping-replica`: a sleeping engine of the deployment, holding host memory (path wake)
 * - `snapshot-local` / `snapshot-store`: the snapshot is on the node's disk / must be fetched
 * - `image-cached`: the image (or its eStargz variant, for lazy) is in the node's content store
 * - `cold`: nothing; every byte crosses the network
 */
export type Locality =
  | "warm-replica"
  | "sleeping-replica"
  | "snapshot-local"
  | "snapshot-store"
  | "image-cached"
  | "cold";

export interface SchedulingNode {
  id: string;
  name: string;
  state: NodeState;
  gpuModel: string;
  gpuCount: number;
  /** GPUs not reserved by any replica (gpuCount minus reservations). */
  freeGpus: number;
  driverVersion: string | null;
  cudaVersion: string | null;
  /** The node's figures as the cold-start model sees them. */
  host: ScenarioHost;
  /** The node runs stargz-snapshotter. */
  estargzSupported: boolean;
  /** Image digests in the node's content store (plain and eStargz). */
  cachedImageDigests: readonly string[];
  /** Snapshot ids present on the node's local disk. */
  localSnapshotIds: readonly string[];
  /** Idle, initialised replicas on the node (any deployment). */
  idleWarmReplicas: readonly { replicaId: string; deploymentId: string }[];
  /**
   * Sleeping engines on the node (any deployment): they hold host memory, not GPUs, and wake
   * on free GPUs of this node. Absent: none.
   */
  sleepingReplicas?: readonly SleepingReplica[];
  /**
   * false: the node's engines cannot receive a peer copy (no ModelExpress). Absent: they can
   * (a simulated fleet's hosts).
   */
  peerTransfer?: boolean;
  /** Cold starts already running on the node: they share its NIC and disk. */
  startsInFlight: number;
}

/** A sleeping engine: its weights wait in host RAM (level 1) or were discarded (level 2). */
export interface SleepingReplica {
  replicaId: string;
  deploymentId: string;
  sleepLevel: 1 | 2;
}

/**
 * A serving replica of the deployment that can send its weights and kernel caches to a new
 * replica on another host (the peer path), with its host's figures.
 */
export interface PeerSource {
  replicaId: string;
  nodeId: string;
  nodeName: string;
  host: ScenarioHost;
  /** Peer copies it is sending now: they share its link. */
  transfersInFlight: number;
}

export interface SchedulingEndpoint {
  id: string;
  /** GPU model the endpoint runs on, matched against `SchedulingNode.gpuModel`. */
  gpuType: string;
  gpuCount: number;
  allowedPaths: readonly StartPath[];
  objective: Objective;
}

/**
 * The deployment's compiled-kernel caches for one GPU model and driver, in the operator's
 * cache store: a start that compiles on a node with that GPU and driver fetches them first.
 */
export interface StoredKernelCache {
  id: string;
  gpuModel: string;
  driverVersion: string;
  bytes: number;
}

export interface SchedulingDeployment {
  id: string;
  endpointId: string;
  imageDigest: string;
  /** Digest of the eStargz variant; null when the deployment has none (no lazy path). */
  estargzDigest: string | null;
  /** Model artifact size: picks the fleet-level history bucket. */
  modelBytes: number;
  /** The image and engine as the cold-start model sees them. */
  imageLayers: readonly ScenarioLayer[];
  imageReadFraction: number;
  engine: ScenarioEngine;
  /** Its kernel caches in the store, one per GPU model and driver (absent: none). */
  kernelCaches?: readonly StoredKernelCache[];
}

export interface SchedulingSnapshot {
  id: string;
  deploymentId: string;
  gpuModel: string;
  driverVersion: string;
  cudaVersion: string;
  status: SnapshotStatus;
  bytes: number;
  sleepLevel: 0 | 1 | 2;
  /** A copy exists in the snapshot store, so any compatible node can fetch it. */
  inStore: boolean;
}

/** A feasible way to start one replica: a node, a path, and what the node holds. */
export interface StartOption {
  nodeId: string;
  nodeName: string;
  path: StartPath;
  locality: Locality;
  /** GPUs this option reserves; 0 for a warm handover (the idle replica already holds them). */
  gpusToReserve: number;
  /** Set for `restore`. */
  snapshotId?: string;
  /**
   * `restore`: stage the weights apart while CRIU works (weightsStagingPays): into the page
   * cache, or into device memory on a host whose engines use a GPU Memory Service.
   */
  stageWeights?: boolean;
  /** Set for `warm`. */
  warmReplicaId?: string;
  /** Set for `wake`: the sleeping engine to wake, and how it sleeps. */
  sleepingReplica?: SleepingReplica;
  /**
   * Set for `peer`: the serving replica the weights and kernel caches come from. Set for a
   * sleep-level-2 `restore` whose weights it sends (restoreWeightsFromPeerPays).
   */
  peerSource?: PeerSource;
  /**
   * `peer`: the image is mounted from its eStargz variant (its weights layers are then never
   * fetched, the engine reads only its code); otherwise the plain image is pulled whole.
   */
  peerLazyImage?: boolean;
  /** `pull` / `lazy`: the stored kernel cache for the node's GPU and driver, fetched before compile. */
  kernelCache?: Pick<StoredKernelCache, "id" | "bytes">;
  startsInFlight: number;
}

/** A node × path combination that cannot be used, and why (for the "why each lost" record). */
export interface InfeasibleOption {
  nodeId: string;
  nodeName: string;
  path: StartPath;
  reason: string;
}

/** A one-word-ish label a person reads: "restore on node-3". */
export function describeOption(option: { path: StartPath; nodeName: string }): string {
  return `${option.path} on ${option.nodeName}`;
}
