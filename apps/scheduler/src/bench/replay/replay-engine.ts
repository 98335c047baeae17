import {
  mulberry32,
  simulateColdStart,
  type ColdStartScenarioInput,
  type ScenarioHost,
} from "@thaw/core/cold-start-model";
import {
  chooseStartOption,
  DEFAULT_EXPLORATION,
  EMPTY_HISTORY_CELL,
  emptyIdleTimeHistogram,
  enumerateStartOptions,
  keepAliveWindows,
  DEFAULT_WARM_POOL_SETTINGS,
  PAPER_HYBRID_SETTINGS,
  KPA_DEFAULTS,
  physicsPriorSeconds,
  planWarmPool,
  warmPoolActions,
  predictTimeToReady,
  observeCapacity,
  updateHistoryStat,
  type HistoryCell,
  type IdleTimeHistogram,
  type SchedulingDeployment,
  type SchedulingNode,
  type SchedulingSnapshot,
  type StartOption,
} from "@thaw/core/scheduling";
import type { StartPath } from "@thaw/core/vocabulary";
import type { EndpointSpec, ReplayFleet, TraceRequest } from "./replay-input.ts";

// A discrete-event replay of request arrivals in virtual time (bench-contracts.md). Every
// decision comes from the same pure functions the live scheduler calls (enumerate, predict,
// choose, keep-alive windows, history updates); every cold start's true duration comes from
// the cold-start physics model with seeded noise — never from the answer a policy expects.

export type PolicyName =
  "thaw" | "pull-keepalive-10m" | "lazy-keepalive-10m" | "hybrid-histogram-pull" | "oracle";
export const POLICIES: PolicyName[] = [
  "thaw",
  "pull-keepalive-10m",
  "lazy-keepalive-10m",
  "hybrid-histogram-pull",
  "oracle",
];

export interface PolicyResult {
  requests: number;
  coldStartFraction: number;
  meanWaitSeconds: number;
  p50WaitSeconds: number;
  p99WaitSeconds: number;
  coldStartsByPath: Record<StartPath, number>;
  idleGpuHours: number;
  gpuHours: number;
}

interface Replica {
  host: SimHost;
  endpoint: string;
  gpus: number;
  /** Since when it holds its GPUs. */
  since: number;
  readyAt: number;
  /** When each of its request slots is next free. */
  slots: number[];
  /** Seconds its slots were busy (for idle GPU-hours). */
  busySeconds: number;
  released: boolean;
  /** Kept idle by the warm-pool plan until then (thaw, oracle, hybrid-histogram-pull). */
  keptUntil?: number;
}

interface SimHost {
  node: SchedulingNode;
  freeGpus: number;
  cachedImages: Set<string>;
  localSnapshots: Set<string>;
  startsInFlight: number[];
}

interface EndpointState {
  spec: EndpointSpec;
  deployment: SchedulingDeployment;
  replicas: Replica[];
  histogram: IdleTimeHistogram;
  /** When the endpoint last had no request in service (NaN while busy / never). */
  idleSince: number;
  snapshot: SchedulingSnapshot | null;
  /** Seconds of the best non-warm start, as the policy predicts it (warm-pool weighting). */
  bestNonWarmSeconds: number;
  /** The idle period (its start) the warm-pool plan was last applied to. */
  plannedIdleSince: number;
  /** When the pre-warm of this idle period is due (NaN: none). */
  preWarmAt: number;
}

const DRIVER = "570.133.20";
/** The live autoscaler scales down a stable window after the load went away. */
const SCALE_DOWN_AFTER_SECONDS = KPA_DEFAULTS.stableWindowSeconds;
const CUDA = "12.8";

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** The true duration of one start: the physics model with noise, seeded by what it is. */
export function trueStartSeconds(
  host: ScenarioHost,
  deployment: SchedulingDeployment,
  option: Pick<StartOption, "path" | "locality">,
  snapshot: SchedulingSnapshot | null,
  seed: number,
): number {
  const cached = option.locality === "image-cached" && option.path !== "restore";
  const path: StartPath = option.path === "warm" ? "warm" : cached ? "pull" : option.path;
  const scenario: ColdStartScenarioInput = {
    seed,
    noise: true,
    host,
    image: {
      format: path === "lazy" ? "estargz" : "oci",
      layers: [...deployment.imageLayers],
      readFraction: deployment.imageReadFraction,
    },
    engine: deployment.engine,
    path,
    restore: {
      local: option.locality !== "snapshot-store",
      ...(snapshot ? { snapshotBytes: snapshot.bytes, sleepLevel: snapshot.sleepLevel } : {}),
    },
  };
  const result = simulateColdStart(scenario);
  const skipped = cached
    ? result.phases.filter((p) => p.phase === "pull").reduce((s, p) => s + p.seconds, 0)
    : 0;
  return Math.max(0.01, result.totalSeconds - skipped);
}

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
  policy: PolicyName;
  seed?: number;
}): PolicyResult {
  const { requests, fleet, policy } = input;
  const seed = input.seed ?? 1;
  const random = mulberry32(seed);
  const usesHistory = policy === "thaw" || policy === "oracle";
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
    freeGpus: h.gpus,
    cachedImages: new Set(),
    localSnapshots: new Set(),
    startsInFlight: [],
  }));
  const endpoints = new Map<string, EndpointState>();
  const history = new Map<string, HistoryCell>();
  const waits: number[] = [];
  const byPath: Record<StartPath, number> = { warm: 0, restore: 0, lazy: 0, pull: 0 };
  let coldRequests = 0;
  let gpuSeconds = 0;
  let idleGpuSeconds = 0;
  let startIndex = 0;

  const endpointState = (name: string): EndpointState => {
    let state = endpoints.get(name);
    if (!state) {
      const spec = fleet.endpoint(name);
      const deployment: SchedulingDeployment = {
        id: `deployment-${name}`,
        endpointId: name,
        imageDigest: `sha256:${name}`,
        estargzDigest: spec.estargz ? `sha256:${name}-esgz` : null,
        modelBytes: spec.engine.weightsBytes,
        imageLayers: spec.image.layers,
        imageReadFraction: spec.image.readFraction,
        engine: spec.engine,
      };
      state = {
        spec,
        deployment,
        replicas: [],
        histogram: emptyIdleTimeHistogram(),
        idleSince: Number.NaN,
        snapshot: null,
        bestNonWarmSeconds: 60,
        plannedIdleSince: Number.NaN,
        preWarmAt: Number.NaN,
      };
      endpoints.set(name, state);
    }
    return state;
  };

  const release = (replica: Replica, at: number) => {
    if (replica.released) return;
    replica.released = true;
    replica.host.freeGpus += replica.gpus;
    const held = Math.max(0, at - replica.since);
    gpuSeconds += held * replica.gpus;
    const serving = Math.max(0, at - replica.readyAt);
    idleGpuSeconds +=
      Math.max(0, serving - replica.busySeconds / replica.slots.length) * replica.gpus;
  };

  // hybrid-histogram-pull is the paper's policy as published: its keep-alive is not capped.
  const warmPoolSettings =
    policy === "hybrid-histogram-pull" ? PAPER_HYBRID_SETTINGS : DEFAULT_WARM_POOL_SETTINGS;

  /** Keep-alive of one endpoint under the policy, measured from when it went idle. */
  const keepAliveSeconds = (state: EndpointState): number => {
    if (policy === "pull-keepalive-10m" || policy === "lazy-keepalive-10m") return 600;
    const windows = keepAliveWindows({
      histogram: state.histogram,
      // hybrid-histogram-pull is the paper's policy: every miss counts in full.
      bestNonWarmSeconds: policy === "hybrid-histogram-pull" ? 60 : state.bestNonWarmSeconds,
      settings: warmPoolSettings,
    });
    return windows.preWarmSeconds + windows.keepAliveSeconds;
  };

  const usesWarmPoolPlan = policy !== "pull-keepalive-10m" && policy !== "lazy-keepalive-10m";
  const windowsOf = (state: EndpointState) =>
    keepAliveWindows({
      histogram: state.histogram,
      bestNonWarmSeconds: policy === "hybrid-histogram-pull" ? 60 : state.bestNonWarmSeconds,
      settings: warmPoolSettings,
    });

  /**
   * An endpoint with nothing in service is what the live warm-pool worker sees after a
   * scale-down: the same plan (planWarmPool → warmPoolActions) decides which replicas stay
   * warm and for how long, the rest are released when the idle period starts, and a histogram
   * that predicts the next request releases everything and pre-warms one replica when due.
   */
  const tendIdleEndpoint = (state: EndpointState, name: string, now: number) => {
    // Live, desired drops only after the autoscaler's stable window: that is the scale-down.
    const idleSince = state.idleSince + SCALE_DOWN_AFTER_SECONDS;
    if (Number.isNaN(idleSince) || idleSince >= now) return;
    if (state.replicas.some((r) => Math.max(r.readyAt, ...r.slots) > idleSince)) return;
    const windows = windowsOf(state);
    if (state.plannedIdleSince !== idleSince) {
      state.plannedIdleSince = idleSince;
      const [plan] = planWarmPool({
        endpoints: [
          {
            endpointId: name,
            histogram: state.histogram,
            idleForSeconds: 0,
            busyReplicas: 0,
            minReplicas: state.spec.minReplicas,
            maxReplicas: state.spec.maxReplicas,
            gpusPerReplica: state.spec.gpus,
            bestNonWarmSeconds: policy === "hybrid-histogram-pull" ? 60 : state.bestNonWarmSeconds,
          },
        ],
        gpuBudget: Number.POSITIVE_INFINITY,
        settings: warmPoolSettings,
      });
      const alive = state.replicas
        .filter((r) => !r.released)
        .sort((a, b) => Math.max(a.readyAt, ...a.slots) - Math.max(b.readyAt, ...b.slots));
      const ids = alive.map((_, i) => String(i));
      const actions = warmPoolActions({
        plan: plan!,
        idleForSeconds: 0,
        warm: ids,
        incoming: 0,
        surplusReady: 0,
      });
      alive.forEach((replica, i) => {
        if (actions.release.includes(String(i))) release(replica, idleSince);
        else if (windows.preWarmSeconds === 0 || i < state.spec.minReplicas)
          replica.keptUntil = idleSince + windows.keepAliveSeconds;
        else release(replica, idleSince);
      });
      state.preWarmAt =
        windows.preWarmSeconds > 0 && windows.keepAliveSeconds > 0
          ? idleSince + windows.reWarmAtSeconds
          : Number.NaN;
    }
    if (!Number.isNaN(state.preWarmAt) && state.preWarmAt <= now) {
      const at = state.preWarmAt;
      state.preWarmAt = Number.NaN;
      if (state.replicas.every((r) => r.released)) {
        const replica = startReplica(state, name, at);
        if (replica)
          replica.keptUntil = idleSince + windows.preWarmSeconds + windows.keepAliveSeconds;
      }
    }
    for (const replica of state.replicas)
      if (!replica.released && replica.keptUntil !== undefined && replica.keptUntil <= now)
        release(replica, Math.max(replica.readyAt, replica.keptUntil));
    state.replicas = state.replicas.filter((r) => !r.released);
  };

  /** Releases every idle replica whose keep-alive ran out before `now`, in time order. */
  const expire = (now: number) => {
    if (usesWarmPoolPlan) for (const [name, state] of endpoints) tendIdleEndpoint(state, name, now);
    for (const state of endpoints.values()) {
      const alive = state.replicas.filter((r) => !r.released);
      const keep = keepAliveSeconds(state);
      for (const replica of alive) {
        const idleFrom = Math.max(replica.readyAt, ...replica.slots);
        const minimum = alive.filter((r) => !r.released).length <= state.spec.minReplicas;
        if (!minimum && idleFrom + keep <= now) release(replica, idleFrom + keep);
      }
      state.replicas = state.replicas.filter((r) => !r.released);
    }
  };

  const startReplica = (state: EndpointState, name: string, now: number): Replica | null => {
    const nodes: SchedulingNode[] = hosts.map((h) => ({
      ...h.node,
      freeGpus: h.freeGpus,
      cachedImageDigests: [...h.cachedImages],
      localSnapshotIds: [...h.localSnapshots],
      startsInFlight: h.startsInFlight.filter((t) => t > now).length,
    }));
    const allowed: StartPath[] =
      policy === "pull-keepalive-10m" || policy === "hybrid-histogram-pull"
        ? ["pull"]
        : policy === "lazy-keepalive-10m"
          ? state.deployment.estargzDigest
            ? ["lazy"]
            : ["pull"]
          : ["restore", "lazy", "pull"];
    const snapshots = state.snapshot ? [state.snapshot] : [];
    const { feasible } = enumerateStartOptions({
      endpoint: {
        id: name,
        gpuType: state.spec.gpuType,
        gpuCount: state.spec.gpus,
        allowedPaths: allowed,
        objective: "mean",
      },
      deployment: state.deployment,
      nodes,
      snapshots,
    });
    if (feasible.length === 0) return null;
    const index = startIndex++;
    const seedOf = (option: StartOption) =>
      hash(`${seed}|${index}|${option.nodeId}|${option.path}`);
    const truth = (option: StartOption) =>
      trueStartSeconds(
        nodes.find((n) => n.id === option.nodeId)!.host,
        state.deployment,
        option,
        option.path === "restore" ? state.snapshot : null,
        seedOf(option),
      );
    let chosen: StartOption;
    let seconds: number;
    if (policy === "oracle") {
      const scored = feasible.map((option) => ({ option, seconds: truth(option) }));
      scored.sort((a, b) => a.seconds - b.seconds);
      chosen = scored[0]!.option;
      seconds = scored[0]!.seconds;
      // Its warm pool weighs a miss by the true cost of the best non-warm start, as thaw's
      // does by the predicted one (left unset, it weighed every miss as 60 s).
      const bestNonWarm = scored.find((s) => s.option.path !== "warm");
      if (bestNonWarm) state.bestNonWarmSeconds = bestNonWarm.seconds;
    } else {
      const predicted = feasible.map((option) => {
        const cell = history.get(`${name}|${option.path}|${option.locality}`);
        return {
          option,
          prediction: predictTimeToReady({
            priorSeconds: physicsPriorSeconds({
              host: nodes.find((n) => n.id === option.nodeId)!.host,
              deployment: state.deployment,
              path: option.path,
              locality: option.locality,
              ...(option.path === "restore" && state.snapshot ? { snapshot: state.snapshot } : {}),
            }),
            history: usesHistory && cell ? { deployment: cell } : {},
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
      state.bestNonWarmSeconds = Math.min(...predicted.map((p) => p.prediction.meanSeconds));
    }
    if (usesHistory) {
      const key = `${name}|${chosen.path}|${chosen.locality}`;
      history.set(key, updateHistoryStat(history.get(key) ?? EMPTY_HISTORY_CELL, seconds));
    }
    const host = hosts.find((h) => h.node.id === chosen.nodeId)!;
    host.freeGpus -= state.spec.gpus;
    host.startsInFlight.push(now + seconds);
    if (chosen.path === "pull") host.cachedImages.add(state.deployment.imageDigest);
    if (chosen.path === "lazy" && state.deployment.estargzDigest)
      host.cachedImages.add(state.deployment.estargzDigest);
    // thaw and oracle capture a snapshot after the first start of a deployment that can have
    // one (the snapshot worker's job); it lands in the store and on this host.
    if (usesHistory && state.spec.snapshot && !state.snapshot) {
      state.snapshot = {
        id: `snapshot-${name}`,
        deploymentId: state.deployment.id,
        gpuModel: host.node.gpuModel,
        driverVersion: DRIVER,
        cudaVersion: CUDA,
        status: "ready",
        bytes: state.spec.snapshot.bytes,
        sleepLevel: state.spec.snapshot.sleepLevel,
        inStore: true,
      };
      host.localSnapshots.add(state.snapshot.id);
    }
    if (chosen.path === "restore" && state.snapshot) host.localSnapshots.add(state.snapshot.id);
    byPath[chosen.path]++;
    const replica: Replica = {
      host,
      endpoint: name,
      gpus: state.spec.gpus,
      since: now,
      readyAt: now + seconds,
      slots: new Array<number>(state.spec.concurrency).fill(now + seconds),
      busySeconds: 0,
      released: false,
    };
    state.replicas.push(replica);
    return replica;
  };

  for (const request of requests) {
    const now = request.at;
    expire(now);
    const state = endpointState(request.endpoint);
    // Nothing in service since idleSince: one idle time, as the live worker records it — from
    // the scale-down (a stable window later) to the scale-up; shorter lulls never scale down.
    const scaledDownAt = state.idleSince + (usesWarmPoolPlan ? SCALE_DOWN_AFTER_SECONDS : 0);
    if (!Number.isNaN(state.idleSince) && scaledDownAt <= now) {
      state.histogram = observeCapacity(
        { histogram: state.histogram, idleSinceMs: scaledDownAt * 1000 },
        "needed",
        now * 1000,
      ).histogram;
    }
    // Packed onto the busiest ready replica with room (every policy alike), else queued.
    let best = packOnto(state.replicas, now);
    let cold = false;
    // Start another replica when every slot is taken past now and there is room for one.
    if ((!best || best.at > now) && state.replicas.length < state.spec.maxReplicas) {
      const started = startReplica(state, request.endpoint, now);
      if (started && (!best || started.readyAt < best.at)) {
        best = { replica: started, slot: 0, at: started.readyAt };
      }
      cold = started !== null && best?.replica === started;
    }
    if (!best) {
      // No capacity anywhere: the request waits for the whole trace (counted, not dropped).
      waits.push(Number.POSITIVE_INFINITY);
      continue;
    }
    const begin = Math.max(now, best.at);
    if (begin > now && (cold || best.replica.readyAt > now)) coldRequests++;
    waits.push(begin - now);
    best.replica.slots[best.slot] = begin + request.seconds;
    best.replica.busySeconds += request.seconds;
    delete best.replica.keptUntil;
    state.idleSince = Math.max(...state.replicas.flatMap((r) => r.slots));
  }
  const end = (requests.at(-1)?.at ?? 0) + 1;
  // What the warm pool does after the last request (its releases and pre-warms) counts too.
  if (usesWarmPoolPlan)
    for (const [name, state] of endpoints) tendIdleEndpoint(state, name, Number.POSITIVE_INFINITY);
  for (const state of endpoints.values()) {
    const keep = keepAliveSeconds(state);
    for (const replica of state.replicas) {
      const idleFrom = Math.max(replica.readyAt, ...replica.slots);
      // Keep-alives run past the trace's end: the GPUs they hold count, as they would.
      release(replica, Math.max(end, idleFrom + keep));
    }
  }
  const finite = waits.filter(Number.isFinite).sort((a, b) => a - b);
  const quantile = (q: number) =>
    finite.length === 0 ? 0 : finite[Math.min(finite.length - 1, Math.floor(q * finite.length))]!;
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    requests: requests.length,
    coldStartFraction: round(coldRequests / requests.length),
    meanWaitSeconds: round(finite.reduce((s, w) => s + w, 0) / Math.max(1, finite.length)),
    p50WaitSeconds: round(quantile(0.5)),
    p99WaitSeconds: round(quantile(0.99)),
    coldStartsByPath: byPath,
    idleGpuHours: round(idleGpuSeconds / 3600),
    gpuHours: round(gpuSeconds / 3600),
  };
}
