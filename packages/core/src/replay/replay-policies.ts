import {
  CAPPED_HYBRID_SETTINGS,
  EXAMPLE_GPU_SECONDS_PER_WAIT_SECOND,
  DEFAULT_WARM_POOL_SETTINGS,
  PAPER_HYBRID_SETTINGS,
  type WarmPoolSettings,
} from "../scheduling/index.ts";
import type { StartPath } from "../vocabulary/index.ts";
import type { EndpointSpec } from "./replay-input.ts";

// The policies bench:replay compares, one object each: which start paths a policy may take,
// how it picks among them, and how long it keeps a replica that went idle. The engine
// (replay-engine.ts) runs any of them the same way.

export type PolicyFamily =
  | "thaw"
  | "thaw-sleep"
  | "pull-keepalive"
  | "lazy-keepalive"
  | "hybrid-histogram-pull"
  | "thaw-capped-hybrid"
  | "thaw-no-peer"
  | "thaw-no-kernel-cache"
  | "oracle"
  | "clairvoyant";

/** How long a replica is kept once idle. */
export type KeepAliveRule =
  /** Every replica kept this long after its last request, then released (a fixed keep-alive). */
  | { kind: "fixed"; seconds: number }
  /**
   * The warm pool as the live scheduler runs it: after the autoscaler's stable window a
   * surplus replica is kept by the plan's keep-alive, and an endpoint gone idle is planned
   * by planWarmPool (keep, or release and pre-warm).
   */
  | {
      kind: "warm-pool";
      settings: WarmPoolSettings;
      /** The price of a second of wait (expected-cost windows); null: the default idle budget. */
      gpuSecondsPerWaitSecond: number | null;
      /** Weigh every miss as this many seconds instead of the predicted start (the paper's). */
      missSeconds?: number;
    }
  /**
   * Knows every future arrival: keeps an idle replica exactly when the gap until it is needed
   * costs less idle GPU time than the wait it saves, at the price.
   */
  | { kind: "clairvoyant"; gpuSecondsPerWaitSecond: number };

export interface ReplayPolicy {
  family: PolicyFamily;
  /** The point of the family's frontier, e.g. "10m" or "price 4". */
  setting: string;
  /** The non-warm paths it may start with. */
  paths(spec: EndpointSpec): StartPath[];
  /** Predicted from histories (learning as it goes), or the true fastest (oracle, clairvoyant). */
  choosePath: "predicted" | "true-fastest";
  /** Records observed starts in histories, which predictions then use. */
  learnsHistory: boolean;
  /** Captures a snapshot after a deployment's first start (the snapshot worker's job). */
  capturesSnapshots: boolean;
  /**
   * Keeps a deployment's compiled-kernel caches in the store once a start has compiled them
   * on a GPU model (ready, then pushed), and later pull and lazy starts there fetch them
   * before compiling. Absent: no store.
   */
  storesKernelCaches?: boolean;
  keepAlive: KeepAliveRule;
  /**
   * A replica the policy lets go puts its engine to sleep where its host has the memory
   * (giving its GPUs back), so a later start on that host can wake it (the wake path).
   */
  sleeps?: boolean;
}

const ALL_PATHS: StartPath[] = ["restore", "peer", "lazy", "pull"];
const lazyOrPull = (spec: EndpointSpec): StartPath[] => (spec.estargz ? ["lazy"] : ["pull"]);

const minutes = (m: number) => `${m}m`;
const price = (p: number) => `price ${p}`;

export function pullKeepAlive(m: number): ReplayPolicy {
  return {
    family: "pull-keepalive",
    setting: minutes(m),
    paths: () => ["pull"],
    choosePath: "predicted",
    learnsHistory: false,
    capturesSnapshots: false,
    keepAlive: { kind: "fixed", seconds: m * 60 },
  };
}

export function lazyKeepAlive(m: number): ReplayPolicy {
  return { ...pullKeepAlive(m), family: "lazy-keepalive", paths: lazyOrPull };
}

/** Shahrad et al.'s hybrid histogram policy as published, with plain pull. */
export function hybridHistogramPull(
  variant: { fixedKeepAliveMinutes: number; marginFraction: number } = {
    fixedKeepAliveMinutes: 10,
    marginFraction: 0.1,
  },
): ReplayPolicy {
  return {
    family: "hybrid-histogram-pull",
    setting: `fixed ${variant.fixedKeepAliveMinutes}m, margin ${variant.marginFraction}`,
    paths: () => ["pull"],
    choosePath: "predicted",
    learnsHistory: false,
    capturesSnapshots: false,
    keepAlive: {
      kind: "warm-pool",
      settings: {
        ...PAPER_HYBRID_SETTINGS,
        fixedKeepAliveSeconds: variant.fixedKeepAliveMinutes * 60,
        marginFraction: variant.marginFraction,
      },
      gpuSecondsPerWaitSecond: 0,
      // The paper weighs every miss alike.
      missSeconds: PAPER_HYBRID_SETTINGS.fullValueMissSeconds,
    },
  };
}

/**
 * Thaw: paths from histories, snapshots, the warm pool by expected cost at a price — or, with
 * none set (the default), the least wait within a 10-minute keep-alive's idle time.
 */
export function thaw(gpuSecondsPerWaitSecond: number | null = null): ReplayPolicy {
  return {
    family: "thaw",
    setting: gpuSecondsPerWaitSecond === null ? "default" : price(gpuSecondsPerWaitSecond),
    paths: () => ALL_PATHS,
    choosePath: "predicted",
    learnsHistory: true,
    capturesSnapshots: true,
    storesKernelCaches: true,
    keepAlive: {
      kind: "warm-pool",
      settings: DEFAULT_WARM_POOL_SETTINGS,
      gpuSecondsPerWaitSecond,
    },
  };
}

/**
 * Thaw with sleeping engines: the same warm pool and price, but a replica it lets go sleeps in
 * its host's memory when there is room, and starts weigh waking one against the other paths.
 */
export function thawSleeping(gpuSecondsPerWaitSecond: number | null = null): ReplayPolicy {
  return {
    ...thaw(gpuSecondsPerWaitSecond),
    family: "thaw-sleep",
    paths: () => ["wake", ...ALL_PATHS],
    sleeps: true,
  };
}

/** Thaw's warm pool on the ski-rental-capped hybrid windows (no price of waiting), for comparison. */
export function thawCappedHybrid(): ReplayPolicy {
  return {
    ...thaw(),
    family: "thaw-capped-hybrid",
    setting: "capped hybrid",
    keepAlive: { kind: "warm-pool", settings: CAPPED_HYBRID_SETTINGS, gpuSecondsPerWaitSecond: 0 },
  };
}

/** Thaw without the peer path: the same run's measure of what copying from a peer adds. */
export function thawWithoutPeer(): ReplayPolicy {
  return {
    ...thaw(),
    family: "thaw-no-peer",
    paths: () => ALL_PATHS.filter((path) => path !== "peer"),
  };
}

/** Thaw without the kernel-cache store: the same run's measure of what the store adds. */
export function thawWithoutKernelCache(): ReplayPolicy {
  return { ...thaw(), family: "thaw-no-kernel-cache", storesKernelCaches: false };
}

/** Thaw's warm pool, but it knows every option's true duration for each start. */
export function oracle(gpuSecondsPerWaitSecond: number | null = null): ReplayPolicy {
  return { ...thaw(gpuSecondsPerWaitSecond), family: "oracle", choosePath: "true-fastest" };
}

/** The bound: every future arrival known, the truly fastest path for each start. */
export function clairvoyant(gpuSecondsPerWaitSecond: number): ReplayPolicy {
  return {
    family: "clairvoyant",
    setting: price(gpuSecondsPerWaitSecond),
    paths: () => ALL_PATHS,
    choosePath: "true-fastest",
    learnsHistory: false,
    capturesSnapshots: true,
    storesKernelCaches: true,
    keepAlive: { kind: "clairvoyant", gpuSecondsPerWaitSecond },
  };
}

/** The bench contract's policy names (the single points `policies` reports). */
export const CONTRACT_POLICIES: Record<string, ReplayPolicy> = {
  thaw: thaw(),
  "pull-keepalive-10m": pullKeepAlive(10),
  "lazy-keepalive-10m": lazyKeepAlive(10),
  "hybrid-histogram-pull": hybridHistogramPull(),
  oracle: oracle(),
  clairvoyant: clairvoyant(EXAMPLE_GPU_SECONDS_PER_WAIT_SECOND),
};

/** Keep-alives the fixed policies are swept over (minutes). */
export const KEEPALIVE_MINUTES = [1, 2, 5, 10, 20, 30, 60];
/**
 * Prices thaw and the clairvoyant bound are swept over: from cheaper than a 1-minute
 * keep-alive (a second of wait worth less than a GPU-second) to more generous than an hour.
 */
export const PRICES = [0.1, 0.5, 1, 2, 4, 8, 16, 32, 64];
/** The bound's points: fewer (it is the dearest to replay), the same span. */
export const CLAIRVOYANT_PRICES = [0.1, 0.5, 2, 4, 16, 64];
/** The hybrid policy's parameters: its fallback keep-alive and its histogram margin. */
export const HYBRID_VARIANTS = [
  { fixedKeepAliveMinutes: 1, marginFraction: 0.1 },
  { fixedKeepAliveMinutes: 10, marginFraction: 0.1 },
  { fixedKeepAliveMinutes: 10, marginFraction: 0.3 },
  { fixedKeepAliveMinutes: 60, marginFraction: 0.1 },
];

/** Every point of every frontier, in the order they are reported. */
export function frontierPolicies(): ReplayPolicy[] {
  return [
    ...KEEPALIVE_MINUTES.map(pullKeepAlive),
    ...KEEPALIVE_MINUTES.map(lazyKeepAlive),
    ...HYBRID_VARIANTS.map(hybridHistogramPull),
    thaw(),
    ...PRICES.map((p) => thaw(p)),
    thawSleeping(),
    ...PRICES.map((p) => thawSleeping(p)),
    ...CLAIRVOYANT_PRICES.map(clairvoyant),
  ];
}

/**
 * Every policy run, in one order every process agrees on: the contract's single points that
 * are not frontier points, then the frontiers. Workers are told indexes into it.
 */
export function allReplayPolicies(): ReplayPolicy[] {
  return [
    oracle(),
    thawCappedHybrid(),
    thawWithoutPeer(),
    thawWithoutKernelCache(),
    ...frontierPolicies(),
  ];
}

/** The run that answers a contract name: the same family and setting. */
export function contractIndex(policies: readonly ReplayPolicy[], name: string): number {
  const wanted = CONTRACT_POLICIES[name]!;
  return policies.findIndex((p) => p.family === wanted.family && p.setting === wanted.setting);
}
