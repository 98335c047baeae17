import {
  mulberry32,
  noiselessPhases,
  weightsStagingPays,
  noisyTotalSeconds,
  PHYSICS,
  type ColdStartScenarioInput,
  type PhaseTiming,
  type ScenarioHost,
} from "../cold-start-model/index.ts";
import {
  chooseStartOption,
  costOptimalWindows,
  DEFAULT_EXPLORATION,
  EMPTY_HISTORY_CELL,
  emptyIdleTimeHistogram,
  KPA_DEFAULTS,
  planWarmPool,
  predictTimeToReady,
  recordIdleTime,
  updateHistoryStat,
  windowsFor,
  enumerateStartOptions,
  scenarioPeerFrom,
  type HistoryCell,
  type IdleTimeHistogram,
  type KeepAliveWindows,
  type PeerSource,
  type SchedulingDeployment,
  type SchedulingNode,
  type SchedulingSnapshot,
  type StartOption,
} from "../scheduling/index.ts";
import { planSleep } from "../sleeping/choose-sleep-level.ts";
import { quantiles } from "../statistics/index.ts";
import type { StartPath } from "../vocabulary/index.ts";
import { EventQueue } from "./event-queue.ts";
import type { EndpointSpec, ReplayFleet, TraceRequest } from "./replay-input.ts";
import type { KeepAliveRule, ReplayPolicy } from "./replay-policies.ts";

// A discrete-event replay of request arrivals in virtual time (bench-contracts.md), for any
// policy of replay-policies.ts. Every decision comes from the pure functions the live
// scheduler calls (enumerate, predict, choose, the warm pool's windows and plan, history
// updates); every start's true duration comes from the cold-start physics model with seeded
// noise — never from the answer a policy expects. Timers (keep-alives, scale-downs, pre-warms)
// live in one event queue, so a request costs the same however many endpoints are idle.

export interface PolicyResult {
  requests: number;
  coldStartFraction: number;
  meanWaitSeconds: number;
  p50WaitSeconds: number;
  p99WaitSeconds: number;
  coldStartsByPath: Record<StartPath, number>;
  /** Requests served at once by a replica that was idle and kept (not a handover). */
  servedByIdleReplica: number;
  /** Requests that found the endpoint scaled down and a parked replica handed over. */
  warmHandovers: number;
  /** Requests that found no GPU free for the whole replay (none expected on a fitting fleet). */
  unservedRequests: number;
  idleGpuHours: number;
  gpuHours: number;
  /** Host memory that sleeping engines held (GB × hours): what sleeping costs instead of GPUs. */
  sleepingGbHours: number;
}

interface Replica {
  host: SimHost;
  endpoint: EndpointState;
  gpus: number;
  /** Since when it holds its GPUs. */
  since: number;
  readyAt: number;
  /** When each of its request slots is next free. */
  slots: number[];
  /** When its last slot frees (idle from then on). */
  busyUntil: number;
  /** Seconds its slots were busy (for idle GPU-hours). */
  busySeconds: number;
  released: boolean;
  /** Bumped on every request it takes: timers set before are stale. */
  version: number;
  /** Parked by the warm pool after a scale-down: its next request is a handover. */
  parked: boolean;
  /** Peer copies it sends: when each one ends (those still ahead share its links). */
  sendsUntil: number[];
}

interface SimHost {
  node: SchedulingNode;
  /** Which kind of host it is: hosts of one kind (figures and GPU) share their physics. */
  kind: number;
  freeGpus: number;
  cachedImages: Set<string>;
  localSnapshots: Set<string>;
  /** Host memory sleeping engines may use (null: none sleep here). */
  memoryBytes: number | null;
  /** Sleeping engines on the host, the longest asleep first (the first to be evicted). */
  sleepers: Sleeper[];
}

/** An engine asleep in its host's memory: it holds no GPU, and wakes on a free one. */
interface Sleeper {
  id: string;
  endpoint: EndpointState;
  host: SimHost;
  sleepLevel: 1 | 2;
  /** Host memory it holds: its process, and at level 1 its weights. */
  bytes: number;
  since: number;
}

interface EndpointState {
  index: number;
  name: string;
  spec: EndpointSpec;
  deployment: SchedulingDeployment;
  replicas: Replica[];
  /** The warm pool's idle times: from capacity going spare to it being needed again. */
  histogram: IdleTimeHistogram;
  /**
   * When each unit of capacity that is spare now went spare, latest last: a need takes the
   * latest (the capacity of the deepest level comes back first), so a replica of a burst is
   * paired with the next burst, and the last replica with the next request after a quiet.
   */
  spare: number[];
  /** Scaled down to nothing in service: its replicas are parked (handovers). */
  scaledDown: boolean;
  snapshot: SchedulingSnapshot | null;
  /**
   * Its kernel caches in the store, per GPU model, from when each is there: a compiling
   * start's replica is ready, then its cache is pushed (policy.storesKernelCaches).
   */
  kernelCaches: { gpuModel: string; storedAt: number }[];
  /** Seconds of the best non-warm start, as the policy predicts it (what a miss costs). */
  bestNonWarmSeconds: number;
  /**
   * Request wait-seconds one miss cost, as observed (moving averages): a miss from zero (every
   * request waits for the start) and a miss of a surplus replica (others serve meanwhile).
   */
  waitPerMiss: { zero: number; surplus: number };
  /** Feasible options by what the representative hosts are (see optionsFor). */
  options: Map<string, { rep: number; option: StartOption }[]>;
  /** The model's fastest start, cached until the endpoint's bytes on hosts change (a start). */
  cheapest: { version: number; seconds: number } | null;
  /** Bumped at each of its starts: what hosts hold of it may have changed. */
  startsVersion: number;
  /** The start being watched: the waits of requests arriving before it is ready are its cost. */
  watchedMiss: { until: number; wait: number; fromZero: boolean } | null;
  /** Bumped whenever a request arrives: a scale-down planned before is stale. */
  busyVersion: number;
  /** Requests waiting for a GPU anywhere (no replica, none startable). */
  pending: TraceRequest[];
  /** Position of the endpoint's next request in `arrivals` (the clairvoyant's future). */
  cursor: number;
  arrivals: TraceRequest[];
  /** Windows last computed, and the histogram they were computed from. */
  windows?: {
    histogram: IdleTimeHistogram;
    surplus: boolean;
    best: number;
    wait: number;
    value: KeepAliveWindows;
  };
}

type TimedEvent =
  | { kind: "idle"; replica: Replica; version: number }
  | { kind: "surplus"; replica: Replica; version: number }
  | { kind: "release"; replica: Replica; version: number }
  | { kind: "prewarm"; endpoint: EndpointState; version: number; keepUntil: number };

const DRIVER = "570.133.20";
const CUDA = "12.8";
/** The live autoscaler scales down a stable window after the load went away. */
const STABLE_WINDOW_SECONDS = KPA_DEFAULTS.stableWindowSeconds;
/** Weight of the latest miss in the moving average of wait-seconds per miss. */
const MISS_AVERAGE_WEIGHT = 0.2;
/** Future requests the clairvoyant looks through for one idle replica, at most. */
const LOOKAHEAD_REQUESTS = 20_000;
/**
 * How much slower than the model's a start can be: the largest phase noise, clamped
 * (exp(3 × 0.2)). The clairvoyant's screens use it so they never skip a gap worth keeping.
 */
const NOISE_CEILING = Math.exp(
  PHYSICS.noiseClampSigmas * Math.max(...Object.values(PHYSICS.noiseSigmaByPhase)),
);
/** Spare units remembered per endpoint (the deepest are forgotten first). */
const MAX_SPARE_UNITS = 256;
function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** What a start's physics depends on, of its option. */
type StartShape = Pick<
  StartOption,
  | "path"
  | "locality"
  | "sleepingReplica"
  | "peerSource"
  | "gpusToReserve"
  | "peerLazyImage"
  | "kernelCache"
>;

/**
 * Physics of starts, cached: a start's noiseless phases depend on the host's figures, the
 * deployment, the path and what is local — not on which of a profile's hosts it is — so each
 * is derived once, and each start applies its own seed's noise (exactly simulateColdStart's).
 */
class StartPhysics {
  /** Per deployment: phases by host kind × path × local (snapshot bytes are the deployment's). */
  private readonly phases = new Map<string, Map<number, PhaseTiming[]>>();

  /** `hostKindOf`: the kind of the host with this node id (a peer source's figures). */
  constructor(private readonly hostKindOf: (nodeId: string) => number) {}

  private phasesOf(
    host: ScenarioHost,
    hostKind: number,
    deployment: SchedulingDeployment,
    option: StartShape,
    snapshot: SchedulingSnapshot | null,
  ): { phases: PhaseTiming[]; skipPull: boolean } {
    const cached = option.locality === "image-cached" && option.path !== "restore";
    // A cached image skips the pull; the peer path keeps its own phases after it.
    const path: StartPath =
      option.path === "warm" || option.path === "peer"
        ? option.path
        : cached
          ? "pull"
          : option.path;
    // (A wake's sleep level takes the place of a restore's locality in the key.)
    const sleepLevel = option.sleepingReplica?.sleepLevel ?? 1;
    const local = path === "wake" ? sleepLevel === 1 : option.locality !== "snapshot-store";
    let ofDeployment = this.phases.get(deployment.id);
    if (!ofDeployment)
      this.phases.set(deployment.id, (ofDeployment = new Map<number, PhaseTiming[]>()));
    // (A peer copy's source: its host's kind and the copies it sends meanwhile.)
    const source = option.peerSource;
    const sourceKey = source
      ? 1 + this.hostKindOf(source.nodeId) * 64 + Math.min(63, source.transfersInFlight)
      : 0;
    // (A peer start mounting the eStargz variant is its own kind of start: index 6.)
    const lazyImage = path === "peer" && !cached && option.peerLazyImage === true;
    const pathIndex = lazyImage ? 6 : PATH_INDEX[path];
    // (A stored kernel cache fetched first: every cache of the replay is the default size.)
    const kernelCache = option.kernelCache !== undefined;
    const key =
      (((hostKind * 8 + pathIndex) * 2 + (local ? 1 : 0)) * 2 + (kernelCache ? 1 : 0)) * 65_536 +
      sourceKey;
    let phases = ofDeployment.get(key);
    if (!phases) {
      const scenario: ColdStartScenarioInput = {
        seed: 1,
        noise: false,
        host,
        image: {
          format: path === "lazy" || lazyImage ? "estargz" : "oci",
          layers: [...deployment.imageLayers],
          readFraction: deployment.imageReadFraction,
        },
        engine: deployment.engine,
        path,
        restore: {
          local,
          ...(snapshot ? { snapshotBytes: snapshot.bytes, sleepLevel: snapshot.sleepLevel } : {}),
          // A level-2 restore whose weights a serving replica sends (the scheduler's choice).
          ...(path === "restore" && source ? { weightsFrom: "peer" as const } : {}),
          // As the scheduler tells Thaw's agents: staged where it pays on this host.
          stageWeights:
            !!snapshot &&
            !(path === "restore" && source) &&
            weightsStagingPays({
              host,
              engine: deployment.engine,
              snapshotBytes: snapshot.bytes,
              sleepLevel: snapshot.sleepLevel,
            }),
        },
        wake: { sleepLevel },
        ...(source ? { peer: scenarioPeerFrom(source, option.gpusToReserve) } : {}),
        ...(kernelCache ? { kernelCache: { bytes: option.kernelCache!.bytes } } : {}),
      };
      phases = noiselessPhases(scenario);
      ofDeployment.set(key, phases);
    }
    return { phases, skipPull: cached };
  }

  /** The physics model's seconds without noise: the predictor's prior. */
  prior(
    host: SimHost,
    deployment: SchedulingDeployment,
    option: StartShape,
    snapshot: SchedulingSnapshot | null,
  ): number {
    const { phases, skipPull } = this.phasesOf(
      host.node.host,
      host.kind,
      deployment,
      option,
      snapshot,
    );
    let total = 0;
    for (const p of phases) if (!(skipPull && p.phase === "pull")) total += p.seconds;
    return Math.max(0.01, total);
  }

  /** The start's true duration under `seed`. */
  truth(
    host: SimHost,
    deployment: SchedulingDeployment,
    option: StartShape,
    snapshot: SchedulingSnapshot | null,
    seed: number,
  ): number {
    const { phases, skipPull } = this.phasesOf(
      host.node.host,
      host.kind,
      deployment,
      option,
      snapshot,
    );
    return Math.max(0.01, noisyTotalSeconds(phases, seed, skipPull ? SKIP_PULL : NO_SKIP));
  }
}
const PATH_INDEX: Record<StartPath, number> = {
  warm: 0,
  wake: 1,
  restore: 2,
  peer: 3,
  lazy: 4,
  pull: 5,
};
const SKIP_PULL: ReadonlySet<PhaseTiming["phase"]> = new Set(["pull"]);
const NO_SKIP: ReadonlySet<PhaseTiming["phase"]> = new Set();

/**
 * Where a request goes, as a scale-down-aware router sends it (the same for every policy):
 * onto the busiest ready replica that has a free slot now — most slots in service first, ties
 * to the oldest — so load packs onto few replicas and the surplus goes idle and can be
 * released. With no ready replica free, the earliest slot to free up among the live replicas
 * (ready or starting), where the request queues.
 */
export function packOnto<R extends Pick<Replica, "readyAt" | "since" | "slots">>(
  replicas: readonly R[],
  now: number,
): { replica: R; slot: number; at: number } | null {
  let packed: { replica: R; slot: number; load: number } | null = null;
  let earliest: { replica: R; slot: number; at: number } | null = null;
  for (const replica of replicas) {
    let free = -1;
    let load = 0;
    for (let slot = 0; slot < replica.slots.length; slot++) {
      const at = Math.max(replica.slots[slot]!, replica.readyAt);
      if (!earliest || at < earliest.at) earliest = { replica, slot, at };
      if (replica.slots[slot]! > now) load++;
      else if (free < 0) free = slot;
    }
    if (replica.readyAt > now || free < 0) continue;
    if (
      !packed ||
      load > packed.load ||
      (load === packed.load && replica.since < packed.replica.since)
    )
      packed = { replica, slot: free, load };
  }
  return packed ? { replica: packed.replica, slot: packed.slot, at: now } : earliest;
}

export function replay(input: {
  requests: readonly TraceRequest[];
  fleet: ReplayFleet;
  policy: ReplayPolicy;
  seed?: number;
}): PolicyResult {
  const { requests, fleet, policy } = input;
  const seed = input.seed ?? 1;
  const random = mulberry32(seed);
  const physics = new StartPhysics((nodeId) => hosts[Number(nodeId.slice(5))]!.kind);
  const rule: KeepAliveRule = policy.keepAlive;
  const kinds = new Map<string, number>();
  const kindOf = (key: string) => {
    let kind = kinds.get(key);
    if (kind === undefined) kinds.set(key, (kind = kinds.size));
    return kind;
  };
  const hosts: SimHost[] = fleet.hosts.map((h, i) => ({
    node: {
      id: `host-${i}`,
      name: h.name,
      state: "ready",
      gpuModel: h.gpuModel,
      gpuCount: h.gpus,
      freeGpus: h.gpus,
      driverVersion: DRIVER,
      cudaVersion: CUDA,
      host: h.host,
      estargzSupported: true,
      cachedImageDigests: [],
      localSnapshotIds: [],
      idleWarmReplicas: [],
      startsInFlight: 0,
    },
    kind: kindOf(`${h.gpuModel}|${JSON.stringify(h.host)}|${h.memoryBytes ?? 0}`),
    freeGpus: h.gpus,
    cachedImages: new Set(),
    localSnapshots: new Set(),
    memoryBytes: policy.sleeps ? (h.memoryBytes ?? null) : null,
    sleepers: [],
  }));
  const endpoints = new Map<string, EndpointState>();
  const byIndex: EndpointState[] = [];
  const history = new Map<string, HistoryCell>();
  const events = new EventQueue<TimedEvent>();
  /** Endpoints with requests waiting for a GPU, in the order they began waiting. */
  const starved: EndpointState[] = [];
  let pooled: IdleTimeHistogram | undefined;
  const waits: number[] = [];
  const byPath: Record<StartPath, number> = {
    warm: 0,
    wake: 0,
    restore: 0,
    peer: 0,
    lazy: 0,
    pull: 0,
  };
  let coldRequests = 0;
  let servedByIdleReplica = 0;
  let warmHandovers = 0;
  let gpuSeconds = 0;
  let idleGpuSeconds = 0;
  let sleepingByteSeconds = 0;
  let sleeperIndex = 0;
  let startIndex = 0;

  // Each endpoint's arrivals, for the clairvoyant's look ahead.
  const arrivalsOf = new Map<string, TraceRequest[]>();
  for (const request of requests) {
    let list = arrivalsOf.get(request.endpoint);
    if (!list) arrivalsOf.set(request.endpoint, (list = []));
    list.push(request);
  }

  const endpointState = (name: string): EndpointState => {
    let state = endpoints.get(name);
    if (!state) {
      const spec = fleet.endpoint(name);
      state = {
        index: byIndex.length,
        name,
        spec,
        deployment: {
          id: `deployment-${name}`,
          endpointId: name,
          imageDigest: `sha256:${name}`,
          estargzDigest: spec.estargz ? `sha256:${name}-esgz` : null,
          modelBytes: spec.engine.weightsBytes,
          imageLayers: spec.image.layers,
          imageReadFraction: spec.image.readFraction,
          engine: spec.engine,
        },
        replicas: [],
        histogram: emptyIdleTimeHistogram(),
        spare: [],
        scaledDown: false,
        snapshot: null,
        kernelCaches: [],
        bestNonWarmSeconds: Number.NaN,
        waitPerMiss: { zero: Number.NaN, surplus: Number.NaN },
        watchedMiss: null,
        cheapest: null,
        options: new Map(),
        startsVersion: 0,
        busyVersion: 0,
        pending: [],
        cursor: 0,
        arrivals: arrivalsOf.get(name) ?? [],
      };
      endpoints.set(name, state);
      byIndex.push(state);
    }
    return state;
  };

  // --- GPUs held and released -------------------------------------------------------------

  const release = (replica: Replica, at: number) => {
    if (replica.released) return;
    replica.released = true;
    replica.host.freeGpus += replica.gpus;
    const held = Math.max(0, at - replica.since);
    gpuSeconds += held * replica.gpus;
    const serving = Math.max(0, at - replica.readyAt);
    idleGpuSeconds +=
      Math.max(0, serving - replica.busySeconds / replica.slots.length) * replica.gpus;
    const list = replica.endpoint.replicas;
    list.splice(list.indexOf(replica), 1);
    if (policy.sleeps) fallAsleep(replica, at);
    // A GPU came free: endpoints waiting for one get their start now.
    while (starved.length > 0) {
      const waiting = starved[0]!;
      if (waiting.pending.length === 0) {
        starved.shift();
        continue;
      }
      const started = startReplica(waiting, at);
      if (!started) break;
      starved.shift();
      const queued = waiting.pending.splice(0);
      for (const request of queued) serve(waiting, request, at, started);
    }
  };

  // --- Sleeping engines (host memory held, no GPU) ----------------------------------------

  const wakeOrEvict = (sleeper: Sleeper, at: number) => {
    const host = sleeper.host;
    host.sleepers.splice(host.sleepers.indexOf(sleeper), 1);
    sleepingByteSeconds += sleeper.bytes * Math.max(0, at - sleeper.since);
    sleeper.endpoint.startsVersion++;
  };

  /**
   * A released replica's engine sleeps where its host has the memory, by the live warm pool's
   * rule (planSleep): level 1 if its weights fit at all, else level 2, the engines asleep
   * longest evicted to make room. Nothing fits: it stops, as without sleeping.
   */
  const fallAsleep = (replica: Replica, at: number) => {
    const host = replica.host;
    const plan = planSleep({
      memoryBytes: host.memoryBytes,
      gpuCount: host.node.gpuCount,
      sleepers: host.sleepers,
      weightsBytes: replica.endpoint.spec.engine.weightsBytes,
    });
    if (!plan) return;
    for (const evicted of plan.evict) wakeOrEvict(evicted, at);
    host.sleepers.push({
      id: `sleeper-${sleeperIndex++}`,
      endpoint: replica.endpoint,
      host,
      sleepLevel: plan.sleepLevel,
      bytes: plan.bytes,
      since: at,
    });
    replica.endpoint.startsVersion++;
  };

  /** The engine of `state` asleep on `host` that wakes fastest (level 1 before level 2). */
  const sleeperOf = (host: SimHost, state: EndpointState): Sleeper | undefined => {
    let found: Sleeper | undefined;
    for (const s of host.sleepers)
      if (s.endpoint === state && (!found || s.sleepLevel < found.sleepLevel)) found = s;
    return found;
  };

  /** Whether the endpoint may lose this replica (minReplicas holds the rest). */
  const releasable = (replica: Replica) =>
    replica.endpoint.replicas.length > replica.endpoint.spec.minReplicas;

  // --- Starts -----------------------------------------------------------------------------

  /** The endpoint's deployment with the kernel caches stored by `now` (placement's view). */
  const withStoredKernelCaches = (state: EndpointState, now: number): SchedulingDeployment => {
    const stored = state.kernelCaches.filter((cache) => cache.storedAt <= now);
    if (stored.length === 0) return state.deployment;
    return {
      ...state.deployment,
      kernelCaches: stored.map((cache) => ({
        id: `kernel-cache-${state.name}-${cache.gpuModel}`,
        gpuModel: cache.gpuModel,
        driverVersion: DRIVER,
        bytes: PHYSICS.defaultKernelCacheBytes,
      })),
    };
  };

  /**
   * The serving replicas of `state` a peer copy could come from at `now`, one per kind of host
   * and load (the least loaded of each): ready, not parked (a paused engine sends nothing).
   */
  const peerSourcesOf = (state: EndpointState, now: number): PeerSource[] => {
    if (!policy.paths(state.spec).includes("peer")) return [];
    const byKind = new Map<number, PeerSource>();
    for (const replica of state.replicas) {
      if (replica.readyAt > now || replica.parked || replica.released) continue;
      const transfersInFlight = replica.sendsUntil.filter((until) => until > now).length;
      const kind = replica.host.kind;
      const known = byKind.get(kind);
      if (known && known.transfersInFlight <= transfersInFlight) continue;
      byKind.set(kind, {
        replicaId: `${replica.host.node.id}`,
        nodeId: replica.host.node.id,
        nodeName: replica.host.node.name,
        host: replica.host.node.host,
        transfersInFlight,
      });
    }
    return [...byKind.values()];
  };

  const hostOfId = (nodeId: string) => hosts[Number(nodeId.slice(5))]!;

  /** What core's chooser would consider for a start of `state` on these hosts. */
  const startOptionsOn = (
    state: EndpointState,
    nodes: SchedulingNode[],
    peerSources: readonly PeerSource[] = [],
    now = Number.POSITIVE_INFINITY,
  ) =>
    enumerateStartOptions({
      endpoint: {
        id: state.name,
        gpuType: state.spec.gpuType,
        gpuCount: state.spec.gpus,
        allowedPaths: policy.paths(state.spec),
        objective: "mean",
      },
      deployment: withStoredKernelCaches(state, now),
      nodes,
      snapshots: state.snapshot ? [state.snapshot] : [],
      peerSources,
    });

  /**
   * The feasible options of a start on these representative hosts: enumerateStartOptions,
   * remembered per endpoint by what the hosts are (kind, bytes held, snapshot) — the options
   * do not depend on which host of a kind stands for it, so each is re-addressed to the
   * current one.
   */
  const optionsFor = (
    state: EndpointState,
    nodes: SchedulingNode[],
    now: number,
  ): StartOption[] => {
    const sources = peerSourcesOf(state, now);
    let signature = state.snapshot ? `s${state.snapshot.status}|` : "|";
    for (const cache of state.kernelCaches) if (cache.storedAt <= now) signature += "k";
    for (const source of sources)
      signature += `p${hostOfId(source.nodeId).kind}:${source.transfersInFlight}`;
    signature += "|";
    for (const node of nodes) {
      const h = hosts[Number(node.id.slice(5))]!;
      signature += `${h.kind}${node.cachedImageDigests.length}${node.cachedImageDigests[0] === state.deployment.imageDigest ? "i" : "e"}${node.localSnapshotIds.length}${node.sleepingReplicas?.[0]?.sleepLevel ?? 0}${sources.some((source) => source.nodeId === node.id) ? "p" : ""},`;
    }
    let template = state.options.get(signature);
    if (!template) {
      const { feasible } = startOptionsOn(state, nodes, sources, now);
      template = feasible.map((option) => ({
        rep: nodes.findIndex((n) => n.id === option.nodeId),
        option,
      }));
      state.options.set(signature, template);
    }
    return template.map(({ rep, option }) => {
      const node = nodes[rep]!;
      const addressed =
        option.nodeId === node.id ? option : { ...option, nodeId: node.id, nodeName: node.name };
      if (!option.peerSource) return addressed;
      // The same signature has a source of the same kind and load: today's.
      const kind = hostOfId(option.peerSource.nodeId).kind;
      const source = sources.find((s) => hostOfId(s.nodeId).kind === kind) ?? option.peerSource;
      return source === option.peerSource ? addressed : { ...addressed, peerSource: source };
    });
  };

  /** A host now holds an image or a snapshot of a deployment. */
  const hold = (host: SimHost, id: string) =>
    (id.startsWith("snapshot-") ? host.localSnapshots : host.cachedImages).add(id);

  /**
   * The hosts a start of `state` could use, one per kind: hosts with the same figures, GPU and
   * the same bytes of this deployment on disk offer the same options, so the first of each
   * stands for the rest (a fleet of hundreds costs what a fleet of a few kinds does).
   * `freed`'s GPUs count as free (the clairvoyant asking what a restart would be).
   */
  const nodesFor = (
    state: EndpointState,
    freed?: Replica,
    /** Every host of the GPU, as if idle (what a start could take at best). */
    anyHost = false,
  ): SchedulingNode[] => {
    const { imageDigest, estargzDigest } = state.deployment;
    const snapshotId = state.snapshot?.id;
    const seen = new Set<number>();
    const nodes: SchedulingNode[] = [];
    for (const h of hosts) {
      if (h.node.gpuModel !== state.spec.gpuType) continue;
      const free = anyHost
        ? h.node.gpuCount
        : h.freeGpus + (freed && freed.host === h ? freed.gpus : 0);
      if (free < state.spec.gpus) continue;
      const image = h.cachedImages.has(imageDigest);
      const esgz = estargzDigest !== null && h.cachedImages.has(estargzDigest);
      const snapshot = snapshotId !== undefined && h.localSnapshots.has(snapshotId);
      const sleeper = h.sleepers.length > 0 ? sleeperOf(h, state) : undefined;
      // A host serving the endpoint cannot copy from itself: it stands apart from the others.
      const serves = state.replicas.some((r) => r.host === h);
      const kind =
        ((h.kind * 3 + (sleeper?.sleepLevel ?? 0)) * 2 + (serves ? 1 : 0)) * 8 +
        (image ? 4 : 0) +
        (esgz ? 2 : 0) +
        (snapshot ? 1 : 0);
      if (seen.has(kind)) continue;
      seen.add(kind);
      nodes.push({
        ...h.node,
        freeGpus: free,
        cachedImageDigests: [...(image ? [imageDigest] : []), ...(esgz ? [estargzDigest] : [])],
        localSnapshotIds: snapshot ? [snapshotId] : [],
        ...(sleeper
          ? {
              sleepingReplicas: [
                {
                  replicaId: sleeper.id,
                  deploymentId: state.deployment.id,
                  sleepLevel: sleeper.sleepLevel,
                },
              ],
            }
          : {}),
        startsInFlight: 0,
      });
    }
    return nodes;
  };
  const hostOf = (option: StartOption) => hostOfId(option.nodeId);

  const startReplica = (state: EndpointState, now: number): Replica | null => {
    const feasible = optionsFor(state, nodesFor(state), now);
    if (feasible.length === 0) return null;
    const index = startIndex++;
    const snapshotFor = (option: StartOption) =>
      option.path === "restore" ? state.snapshot : null;
    const truth = (option: StartOption) => trueSeconds(state, option, now);
    let chosen: StartOption;
    let seconds: number;
    if (policy.choosePath === "true-fastest") {
      let best = { option: feasible[0]!, seconds: Number.POSITIVE_INFINITY };
      for (const option of feasible) {
        const s = truth(option);
        if (s < best.seconds) best = { option, seconds: s };
      }
      chosen = best.option;
      seconds = best.seconds;
      // What a miss costs next time: the true best start.
      state.bestNonWarmSeconds = best.seconds;
    } else {
      const predicted = feasible.map((option) => {
        const cell = policy.learnsHistory
          ? history.get(`${state.name}|${option.path}|${option.locality}`)
          : undefined;
        return {
          option,
          prediction: predictTimeToReady({
            priorSeconds: physics.prior(
              hostOf(option),
              state.deployment,
              option,
              snapshotFor(option),
            ),
            history: cell ? { deployment: cell } : {},
          }),
        };
      });
      const choice = chooseStartOption({
        options: predicted,
        objective: "mean",
        scaleFromZeroWithWaitingRequests: false,
        exploration: { ...DEFAULT_EXPLORATION, recentDecisions: index, recentExplorations: 0 },
        random,
      });
      chosen = choice.chosen!.option;
      seconds = truth(chosen);
      // What a miss would cost next time: the best predicted non-warm option.
      let best = Number.POSITIVE_INFINITY;
      for (const p of predicted) best = Math.min(best, p.prediction.meanSeconds);
      state.bestNonWarmSeconds = best;
    }
    if (policy.learnsHistory) {
      const key = `${state.name}|${chosen.path}|${chosen.locality}`;
      history.set(key, updateHistoryStat(history.get(key) ?? EMPTY_HISTORY_CELL, seconds));
    }
    const host = hostOf(chosen);
    host.freeGpus -= state.spec.gpus;
    if (chosen.path === "wake") wakeOrEvict(sleeperOf(host, state)!, now);
    if (chosen.path === "pull" || (chosen.path === "peer" && !chosen.peerLazyImage))
      hold(host, state.deployment.imageDigest);
    if (chosen.path === "peer" && chosen.peerLazyImage && state.deployment.estargzDigest)
      hold(host, state.deployment.estargzDigest);
    if (chosen.path === "lazy" && state.deployment.estargzDigest)
      hold(host, state.deployment.estargzDigest);
    // A deployment that can have a snapshot gets one after its first start (the snapshot
    // worker's job); it lands in the store and on this host.
    if (policy.capturesSnapshots && state.spec.snapshot && !state.snapshot) {
      state.snapshot = {
        id: `snapshot-${state.name}`,
        deploymentId: state.deployment.id,
        gpuModel: host.node.gpuModel,
        driverVersion: DRIVER,
        cudaVersion: CUDA,
        status: "ready",
        bytes: state.spec.snapshot.bytes,
        sleepLevel: state.spec.snapshot.sleepLevel,
        inStore: true,
      };
      hold(host, state.snapshot.id);
    }
    if (chosen.path === "restore" && state.snapshot) hold(host, state.snapshot.id);
    // A start that compiles where no cache is stored for its GPU captures one once ready; it
    // is in the store after its push (one stream to the registry, as a fetch reads it back).
    if (
      policy.storesKernelCaches &&
      (chosen.path === "pull" || chosen.path === "lazy") &&
      !state.kernelCaches.some((cache) => cache.gpuModel === host.node.gpuModel)
    )
      state.kernelCaches.push({
        gpuModel: host.node.gpuModel,
        storedAt:
          now + seconds + PHYSICS.defaultKernelCacheBytes / PHYSICS.registryStreamBytesPerSecond,
      });
    byPath[chosen.path]++;
    const replica: Replica = {
      host,
      endpoint: state,
      gpus: state.spec.gpus,
      since: now,
      readyAt: now + seconds,
      slots: new Array<number>(state.spec.concurrency).fill(now + seconds),
      busyUntil: now + seconds,
      busySeconds: 0,
      released: false,
      version: 0,
      parked: false,
      sendsUntil: [],
    };
    if (chosen.peerSource) sendFrom(state, chosen.peerSource, host, now, now + seconds);
    state.replicas.push(replica);
    state.startsVersion++;
    watchMiss(state, now, replica.readyAt, state.replicas.length === 1);
    // Idle from when it is ready, unless a request takes it first.
    events.push(replica.readyAt, { kind: "idle", replica, version: 0 });
    return replica;
  };

  /**
   * A peer copy to `target` until `until` loads the least loaded serving replica on a host of
   * the chosen source's kind (the one the option stands for).
   */
  const sendFrom = (
    state: EndpointState,
    source: PeerSource,
    target: SimHost,
    now: number,
    until: number,
  ) => {
    const kind = hostOfId(source.nodeId).kind;
    let sender: Replica | undefined;
    let load = Number.POSITIVE_INFINITY;
    for (const replica of state.replicas) {
      if (replica.host.kind !== kind || replica.host === target) continue;
      if (replica.readyAt > now || replica.parked || replica.released) continue;
      const sending = replica.sendsUntil.filter((at) => at > now).length;
      if (sending < load) {
        sender = replica;
        load = sending;
      }
    }
    if (!sender) return;
    sender.sendsUntil = sender.sendsUntil.filter((at) => at > now);
    sender.sendsUntil.push(until);
  };

  /**
   * A start began: the previous one's cost is known now (its requests have been placed), so
   * it goes into the endpoint's averages, and this one is watched until it is ready.
   */
  const watchMiss = (state: EndpointState, now: number, until: number, fromZero: boolean) => {
    const done = state.watchedMiss;
    if (done) {
      const key = done.fromZero ? "zero" : "surplus";
      const old = state.waitPerMiss[key];
      state.waitPerMiss[key] = Number.isNaN(old)
        ? done.wait
        : (1 - MISS_AVERAGE_WEIGHT) * old + MISS_AVERAGE_WEIGHT * done.wait;
    }
    state.watchedMiss = { until, wait: 0, fromZero };
    void now;
  };

  // --- Serving ----------------------------------------------------------------------------

  /** Puts `request` on the target slot (by default its replica's earliest) and records its wait. */
  const serve = (
    state: EndpointState,
    request: TraceRequest,
    now: number,
    onto: Replica | { replica: Replica; slot: number; at: number },
  ): void => {
    const target = "slots" in onto ? { replica: onto, ...earliestSlot(onto, now) } : onto;
    const replica = target.replica;
    let begin = Math.max(now, target.at);
    if (replica.parked) {
      // The endpoint had scaled down: the parked replica is handed over (the warm path).
      replica.parked = false;
      for (const other of state.replicas) other.parked = false;
      state.scaledDown = false;
      const handover = PHYSICS.handoverSeconds;
      begin = Math.max(begin, now + handover);
      warmHandovers++;
      byPath.warm++;
    } else if (target.at <= now && replica.busyUntil <= now && replica.readyAt <= now) {
      servedByIdleReplica++;
    }
    if (begin > request.at && replica.readyAt > request.at) coldRequests++;
    waits.push(begin - request.at);
    const watched = state.watchedMiss;
    if (watched && request.at < watched.until) watched.wait += begin - request.at;
    replica.slots[target.slot] = begin + request.seconds;
    replica.busySeconds += request.seconds;
    if (begin + request.seconds > replica.busyUntil) replica.busyUntil = begin + request.seconds;
    replica.version++;
    events.push(replica.busyUntil, { kind: "idle", replica, version: replica.version });
  };

  const earliestSlot = (replica: Replica, now: number) => {
    let slot = 0;
    for (let i = 1; i < replica.slots.length; i++)
      if (replica.slots[i]! < replica.slots[slot]!) slot = i;
    return { slot, at: Math.max(now, replica.slots[slot]!, replica.readyAt) };
  };

  // --- Keep-alive and the warm pool -------------------------------------------------------

  /** A unit of capacity went spare at `at`. */
  const capacitySpare = (state: EndpointState, at: number) => {
    state.spare.push(at);
    if (state.spare.length > MAX_SPARE_UNITS) state.spare.shift();
  };

  /** A unit of capacity beyond what is busy is needed again: one idle time ends. */
  const capacityNeeded = (state: EndpointState, at: number) => {
    const since = state.spare.pop();
    if (since === undefined) return;
    const idle = Math.max(0, at - since);
    state.histogram = recordIdleTime(state.histogram, idle);
    // The pooled histogram of every endpoint (the prior of thin ones) gets it too.
    pooled = recordIdleTime(pooled ?? emptyIdleTimeHistogram(), idle);
  };

  /** What the warm pool knows of an endpoint (windowsFor's and planWarmPool's inputs). */
  const warmPoolInput = (state: EndpointState, surplus = false) => {
    if (rule.kind !== "warm-pool") throw new Error("warm-pool inputs of a policy without one");
    const best = rule.missSeconds ?? state.bestNonWarmSeconds;
    const wait = surplus ? state.waitPerMiss.surplus : state.waitPerMiss.zero;
    return {
      histogram: state.histogram,
      bestNonWarmSeconds: Number.isNaN(best) ? 60 : best,
      gpusPerReplica: state.spec.gpus,
      gpuSecondsPerWaitSecond: rule.gpuSecondsPerWaitSecond,
      ...(pooled ? { priorHistogram: pooled } : {}),
      ...(Number.isNaN(wait) || rule.missSeconds !== undefined ? {} : { waitSecondsPerMiss: wait }),
    };
  };

  /** The warm pool's windows for the endpoint now (cached while nothing they use changed). */
  const windowsOf = (state: EndpointState, surplus: boolean): KeepAliveWindows => {
    if (rule.kind !== "warm-pool") throw new Error("windows of a policy without a warm pool");
    const best = rule.missSeconds ?? state.bestNonWarmSeconds;
    const wait = surplus ? state.waitPerMiss.surplus : state.waitPerMiss.zero;
    const cached = state.windows;
    if (
      cached &&
      cached.histogram === state.histogram &&
      cached.surplus === surplus &&
      cached.best === best &&
      Object.is(cached.wait, wait)
    )
      return cached.value;
    const endpoint = warmPoolInput(state, surplus);
    const value =
      surplus && rule.settings.windows === "expected-cost"
        ? costOptimalWindows({
            histogram: endpoint.histogram,
            ...(endpoint.priorHistogram ? { prior: endpoint.priorHistogram } : {}),
            priorWeight: rule.settings.priorWeight,
            bestNonWarmSeconds: endpoint.bestNonWarmSeconds,
            gpusPerReplica: endpoint.gpusPerReplica,
            gpuSecondsPerWaitSecond: rule.gpuSecondsPerWaitSecond,
            ...(endpoint.waitSecondsPerMiss !== undefined
              ? { waitSecondsPerMiss: endpoint.waitSecondsPerMiss }
              : {}),
            preWarm: false,
          })
        : windowsFor(endpoint, rule.settings);
    state.windows = { histogram: state.histogram, surplus, best, wait, value };
    return value;
  };

  /** Every replica of the endpoint is idle at `at` (nothing in service). */
  const fullyIdle = (state: EndpointState, at: number) =>
    state.replicas.every((r) => r.busyUntil <= at && r.readyAt <= at);

  const onIdle = (replica: Replica, at: number) => {
    // Parked by the warm pool (kept or pre-warmed): its release is already planned.
    if (replica.parked) return;
    switch (rule.kind) {
      case "fixed":
        events.push(at + rule.seconds, { kind: "release", replica, version: replica.version });
        return;
      case "warm-pool":
        // The autoscaler scales down a stable window after the load went: then it is spare.
        events.push(at + STABLE_WINDOW_SECONDS, {
          kind: "surplus",
          replica,
          version: replica.version,
        });
        return;
      case "clairvoyant":
        clairvoyantKeep(replica, at, rule.gpuSecondsPerWaitSecond);
        return;
    }
  };

  /**
   * A replica is spare (a stable window idle). While others serve, it is surplus capacity and
   * keeps the surplus window; when it is the last to go, the endpoint scales down to nothing
   * in service: it takes the windows of that (keep it, or release it and pre-warm), and every
   * replica still held is parked.
   */
  const onSurplus = (replica: Replica, at: number) => {
    if (rule.kind !== "warm-pool") return;
    const state = replica.endpoint;
    capacitySpare(state, at);
    const last = !state.scaledDown && fullyIdle(state, at);
    if (last) {
      state.scaledDown = true;
      for (const r of state.replicas) r.parked = true;
      if (!releasable(replica)) return;
      // The live plan, on the inputs the live worker has: keep it, or release and pre-warm.
      const [plan] = planWarmPool({
        endpoints: [
          {
            endpointId: state.name,
            ...warmPoolInput(state),
            windows: windowsOf(state, false),
            idleForSeconds: 0,
            busyReplicas: 0,
            minReplicas: state.spec.minReplicas,
            maxReplicas: state.spec.maxReplicas,
          },
        ],
        gpuBudget: Number.POSITIVE_INFINITY,
        settings: rule.settings,
      });
      const windows = plan!.windows;
      if (windows.preWarmSeconds > 0) {
        release(replica, at);
        if (windows.keepAliveSeconds > 0)
          events.push(at + windows.reWarmAtSeconds, {
            kind: "prewarm",
            endpoint: state,
            version: state.busyVersion,
            keepUntil: at + windows.preWarmSeconds + windows.keepAliveSeconds,
          });
        return;
      }
      if (plan!.warmReplicas === 0 || windows.keepAliveSeconds <= 0) release(replica, at);
      else
        events.push(at + windows.keepAliveSeconds, {
          kind: "release",
          replica,
          version: replica.version,
        });
      return;
    }
    if (state.scaledDown) replica.parked = true;
    const windows = windowsOf(state, true);
    const keep =
      rule.settings.windows === "hybrid-histogram"
        ? windows.preWarmSeconds + windows.keepAliveSeconds
        : windows.keepAliveSeconds;
    if (keep <= 0 && releasable(replica)) release(replica, at);
    else events.push(at + keep, { kind: "release", replica, version: replica.version });
  };

  const onPrewarm = (state: EndpointState, at: number, keepUntil: number) => {
    if (state.replicas.length > 0) return;
    const replica = startReplica(state, at);
    if (!replica) return;
    replica.parked = true;
    events.push(Math.max(keepUntil, replica.readyAt), {
      kind: "release",
      replica,
      version: replica.version,
    });
  };

  /**
   * The clairvoyant's keep-alive: it knows when this replica will next be needed (the first
   * future request that finds every other replica busy) and keeps it exactly when the gap
   * costs less idle GPU time than the wait releasing it would cost at the price (the
   * objective every policy is measured by: price · wait + idle GPU time).
   */
  const clairvoyantKeep = (replica: Replica, at: number, price: number) => {
    const state = replica.endpoint;
    if (!releasable(replica)) return;
    const others: number[] = [];
    for (const r of state.replicas)
      if (r !== replica) for (const s of r.slots) others.push(Math.max(s, r.readyAt));
    let restart = cheapestStartSeconds(state);
    const g = replica.gpus;
    let needAt = Number.POSITIVE_INFINITY;
    let needIndex = -1;
    // Past this gap, keeping it cannot pay even if a replica's worth of requests (all its
    // slots) would wait a whole restart for it.
    const horizon = (NOISE_CEILING * price * restart * (state.spec.concurrency + 1)) / g;
    const arrivals = state.arrivals;
    for (
      let j = state.cursor, seen = 0;
      j < arrivals.length && seen < LOOKAHEAD_REQUESTS;
      j++, seen++
    ) {
      const next = arrivals[j]!;
      if (next.at < at) continue;
      if (next.at - at > horizon) break;
      let slot = -1;
      for (let k = 0; k < others.length; k++)
        if (others[k]! <= next.at && (slot < 0 || others[k]! < others[slot]!)) slot = k;
      if (slot < 0) {
        needAt = next.at;
        needIndex = j;
        break;
      }
      others[slot] = next.at + next.seconds;
    }
    if (needAt === Number.POSITIVE_INFINITY) {
      release(replica, at);
      return;
    }
    // What releasing costs: the restart it would make then (its true duration, one replica
    // fewer on the endpoint, its GPUs free), the wait of the requests that would meet it, and
    // the restart's GPU time.
    // Only a gap that could pay (even for a whole replica of requests waiting twice the model's
    // restart) needs the exact restart; most idle replicas are released on this screen.
    if (g * (needAt - at) >= NOISE_CEILING * price * restart * (state.spec.concurrency + 1)) {
      release(replica, at);
      return;
    }
    const list = state.replicas;
    list.splice(list.indexOf(replica), 1);
    const restartThen = fastestTrueStart(state, needAt, replica);
    list.push(replica);
    if (Number.isFinite(restartThen)) restart = restartThen;
    // Requests meeting the restart: each waits for the first slot to free among the other
    // replicas or for the restarted one, whichever comes first (others' slots as they would be).
    const readyAgain = needAt + restart;
    let wait = 0;
    let restartedSlotsUsed = 0;
    for (let j = needIndex; j < arrivals.length; j++) {
      const next = arrivals[j]!;
      if (next.at >= readyAgain) break;
      let slot = 0;
      for (let k = 1; k < others.length; k++) if (others[k]! < others[slot]!) slot = k;
      const otherFree = others.length > 0 ? others[slot]! : Number.POSITIVE_INFINITY;
      if (otherFree <= next.at) {
        others[slot] = next.at + next.seconds;
        continue;
      }
      if (otherFree < readyAgain || restartedSlotsUsed >= state.spec.concurrency) {
        const begin = Math.min(otherFree, Math.max(readyAgain, otherFree));
        wait += begin - next.at;
        if (others.length > 0) others[slot] = begin + next.seconds;
      } else {
        wait += readyAgain - next.at;
        restartedSlotsUsed++;
      }
    }
    if (g * (needAt - at) < price * wait) {
      // Kept: it serves at needAt; if routing sends that request elsewhere, decide again then.
      events.push(needAt + 1e-6, { kind: "idle", replica, version: replica.version });
      return;
    }
    release(replica, at);
  };

  /**
   * A start's true duration. Its noise is seeded by what the start is — endpoint, moment,
   * node, path — not by how many starts came before, so every policy starting the same
   * replica at the same moment meets the same luck (common random numbers: policies differ
   * by their decisions, not their draws).
   */
  const trueSeconds = (state: EndpointState, option: StartOption, now: number) =>
    physics.truth(
      hostOf(option),
      state.deployment,
      option,
      option.path === "restore" ? state.snapshot : null,
      hash(
        `${seed}|${state.name}|${Math.round(now * 1000)}|${state.replicas.length}|${option.nodeId}|${option.path}`,
      ),
    );

  /** The true fastest start the endpoint could make at `now`, `freed`'s GPUs counted free. */
  const fastestTrueStart = (state: EndpointState, now: number, freed?: Replica): number => {
    // (`now` seeds the start's noise.)
    const nodes = nodesFor(state, freed);
    const feasible = optionsFor(state, nodes, now);
    let best = Number.POSITIVE_INFINITY;
    for (const option of feasible) best = Math.min(best, trueSeconds(state, option, now));
    return best;
  };

  /** The physics model's fastest feasible start for the endpoint now (the clairvoyant's S). */
  const cheapestStartSeconds = (state: EndpointState): number => {
    if (state.cheapest?.version === state.startsVersion) return state.cheapest.seconds;
    const { feasible } = startOptionsOn(state, nodesFor(state, undefined, true));
    let best = Number.POSITIVE_INFINITY;
    for (const option of feasible)
      best = Math.min(
        best,
        physics.prior(
          hostOf(option),
          state.deployment,
          option,
          option.path === "restore" ? state.snapshot : null,
        ),
      );
    const seconds = Number.isFinite(best) ? best : 60;
    state.cheapest = { version: state.startsVersion, seconds };
    return seconds;
  };

  const handle = (event: TimedEvent, at: number) => {
    switch (event.kind) {
      case "idle":
        if (event.replica.released || event.replica.version !== event.version) return;
        onIdle(event.replica, at);
        return;
      case "surplus":
        if (event.replica.released || event.replica.version !== event.version) return;
        onSurplus(event.replica, at);
        return;
      case "release":
        if (event.replica.released || event.replica.version !== event.version) return;
        if (releasable(event.replica)) release(event.replica, at);
        return;
      case "prewarm":
        if (event.endpoint.busyVersion !== event.version) return;
        onPrewarm(event.endpoint, at, event.keepUntil);
        return;
    }
  };

  const runEventsUntil = (now: number) => {
    while (events.size > 0 && events.peekTime() <= now) {
      const { at, item } = events.pop()!;
      handle(item, at);
    }
  };

  // --- The trace --------------------------------------------------------------------------

  for (const request of requests) {
    const now = request.at;
    runEventsUntil(now);
    const state = endpointState(request.endpoint);
    state.cursor++;
    state.busyVersion++;
    state.scaledDown = false;
    if (state.pending.length > 0) {
      // Already waiting for a GPU: this request waits with the others.
      state.pending.push(request);
      continue;
    }
    let best = packOnto(state.replicas, now);
    const idleCapacity = best !== null && best.at <= now && best.replica.busyUntil <= now;
    if (idleCapacity || !best || best.at > now) capacityNeeded(state, now);
    // Start another replica when every slot is taken past now and there is room for one.
    if ((!best || best.at > now) && state.replicas.length < state.spec.maxReplicas) {
      const started = startReplica(state, now);
      if (started && (!best || started.readyAt < best.at)) {
        best = { replica: started, slot: 0, at: started.readyAt };
      }
    }
    if (!best) {
      // No GPU anywhere: the request waits until one comes free.
      state.pending.push(request);
      starved.push(state);
      continue;
    }
    serve(state, request, now, best);
  }

  // After the last request: the warm pool's releases and pre-warms run to their end.
  runEventsUntil(Number.POSITIVE_INFINITY);
  const end = (requests.at(-1)?.at ?? 0) + 1;
  let unserved = 0;
  for (const state of byIndex) {
    unserved += state.pending.length;
    for (const replica of [...state.replicas])
      // minReplicas, or kept past the end: the GPUs they hold count to the end, as they would.
      release(replica, Math.max(end, replica.busyUntil));
  }

  for (const host of hosts) for (const sleeper of [...host.sleepers]) wakeOrEvict(sleeper, end);

  waits.sort((a, b) => a - b);
  const [p50Wait, p99Wait] = quantiles(waits, [0.5, 0.99]);
  const round = (x: number) => Math.round(x * 1000) / 1000;
  let waitSum = 0;
  for (const w of waits) waitSum += w;
  return {
    requests: requests.length,
    coldStartFraction: round(coldRequests / requests.length),
    meanWaitSeconds: round(waitSum / Math.max(1, waits.length)),
    p50WaitSeconds: round(p50Wait ?? 0),
    p99WaitSeconds: round(p99Wait ?? 0),
    coldStartsByPath: byPath,
    servedByIdleReplica,
    warmHandovers,
    unservedRequests: unserved,
    idleGpuHours: round(idleGpuSeconds / 3600),
    gpuHours: round(gpuSeconds / 3600),
    sleepingGbHours: round(sleepingByteSeconds / 1e9 / 3600),
  };
}
