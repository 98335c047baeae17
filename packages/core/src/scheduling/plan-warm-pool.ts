// The warm pool of each endpoint, after Shahrad et al., "Serverless in the Wild" (ATC '20),
// hybrid histogram policy, weighed by what a miss costs here (ARCHITECTURE.md §5).
//
// Per endpoint, a histogram of idle times (gap between the end of one busy period and the
// next request) in 1-minute bins up to 4 h:
//   - representative (≥ minSamples idle times, few beyond 4 h, and the bin counts' coefficient
//     of variation ≥ minBinCountCv: the mass is concentrated, so the pattern is predictable):
//       preWarm   = p5  · (1 - margin)          release the replica, re-warm after this long
//       keepAlive = p99 · (1 + margin) - preWarm   then keep it this long
//   - otherwise: preWarm = 0, keepAlive = fixedKeepAliveSeconds (the paper's fallback).
// The paper's CV is over bin counts: a flat histogram (CV ≈ 0) says nothing about when the
// next request comes; a spiked one (high CV) does.
//
// Then the miss cost: a miss costs bestNonWarmSeconds (the predicted time of the best
// non-warm path). Keeping a replica warm only pays while that cost is significant, so
//   keepAlive · min(1, bestNonWarmSeconds / fullValueMissSeconds)
// (a 3 s restore keeps a replica 1/20 as long as a 60 s pull), and the re-warm starts
// bestNonWarmSeconds before the pre-warm point so the replica is ready when it is due.
//
// And a cap, from ski rental: an idle replica holds its GPU exactly as a cold start does
// (occupied, serving nothing), so holding it longer than one start takes costs more GPU time
// than the start it might save. keepAlive ≤ keepAliveStartMultiple · bestNonWarmSeconds
// (at least one bin). Without it, a histogram whose head is in the first minute (no pre-warm
// point) keeps replicas through its whole p99 tail: 40 minutes idle to save a 2-minute
// restore, as bench:replay's multi-endpoint trace showed. The paper's policy is uncapped
// (keepAliveStartMultiple = Infinity: PAPER_HYBRID_SETTINGS, bench:replay's baseline).
// Finally min/max replicas, and a fleet-wide GPU budget handed out by miss cost, dearest first.
//
// That is the baseline (`windows: "hybrid-histogram"`). Thaw itself chooses its windows by
// expected cost at the endpoint's price for a second of wait (cost-optimal-windows.ts,
// `windows: "expected-cost"`, the default): the same histogram, no hand-set weights or caps.

import { costOptimalWindows, DEFAULT_PRIOR_WEIGHT } from "./cost-optimal-windows.ts";
import {
  emptyIdleTimeHistogram,
  HISTOGRAM_BIN_SECONDS,
  recordIdleTime,
  type IdleTimeHistogram,
  type KeepAliveWindows,
} from "./idle-time-histogram.ts";

export {
  emptyIdleTimeHistogram,
  HISTOGRAM_BIN_SECONDS,
  HISTOGRAM_BINS,
  recordIdleTime,
  type IdleTimeHistogram,
  type KeepAliveWindows,
} from "./idle-time-histogram.ts";

export interface WarmPoolSettings {
  /** How windows are chosen: by expected cost at the endpoint's price, or the paper's rule. */
  windows: "expected-cost" | "hybrid-histogram";
  /** Pseudo-samples the pooled idle times of similar endpoints are worth (expected cost). */
  priorWeight: number;
  minSamples: number;
  minBinCountCv: number;
  /** Share of idle times beyond 4 h above which the histogram cannot say when to re-warm. */
  maxOutOfBoundsShare: number;
  marginFraction: number;
  fixedKeepAliveSeconds: number;
  /** A miss costing this much or more gets the whole histogram window. */
  fullValueMissSeconds: number;
  /** Keep-alive at most this many times the best non-warm start (Infinity: uncapped). */
  keepAliveStartMultiple: number;
}

export const DEFAULT_WARM_POOL_SETTINGS: WarmPoolSettings = {
  windows: "expected-cost",
  priorWeight: DEFAULT_PRIOR_WEIGHT,
  minSamples: 10,
  minBinCountCv: 2,
  maxOutOfBoundsShare: 0.5,
  marginFraction: 0.1,
  fixedKeepAliveSeconds: 600,
  fullValueMissSeconds: 60,
  keepAliveStartMultiple: 1,
};

/** Shahrad et al.'s policy as published: no cap on the keep-alive. */
export const PAPER_HYBRID_SETTINGS: WarmPoolSettings = {
  ...DEFAULT_WARM_POOL_SETTINGS,
  windows: "hybrid-histogram",
  keepAliveStartMultiple: Number.POSITIVE_INFINITY,
};

/** The hybrid histogram policy with the ski-rental cap (the paper's hybrid policy held to one best non-warm start; bench:replay's thaw-capped-hybrid). */
export const CAPPED_HYBRID_SETTINGS: WarmPoolSettings = {
  ...DEFAULT_WARM_POOL_SETTINGS,
  windows: "hybrid-histogram",
};

function percentileBinUpperSeconds(
  bins: readonly number[],
  total: number,
  fraction: number,
): number {
  let seen = 0;
  for (let i = 0; i < bins.length; i++) {
    seen += bins[i] ?? 0;
    if (seen >= fraction * total) return i * HISTOGRAM_BIN_SECONDS;
  }
  return bins.length * HISTOGRAM_BIN_SECONDS;
}

function binCountCv(bins: readonly number[]): number {
  const mean = bins.reduce((a, b) => a + b, 0) / bins.length;
  if (mean === 0) return 0;
  const variance = bins.reduce((sum, b) => sum + (b - mean) ** 2, 0) / bins.length;
  return Math.sqrt(variance) / mean;
}

/** Pre-warm and keep-alive windows of one endpoint. */
export function keepAliveWindows(input: {
  histogram: IdleTimeHistogram;
  bestNonWarmSeconds: number;
  settings?: WarmPoolSettings;
}): KeepAliveWindows {
  const settings = input.settings ?? DEFAULT_WARM_POOL_SETTINGS;
  const { bins, outOfBounds } = input.histogram;
  const inBounds = bins.reduce((a, b) => a + b, 0);
  const total = inBounds + outOfBounds;
  const missSeconds = Math.max(0, input.bestNonWarmSeconds);
  const missCostWeight = Math.min(1, missSeconds / settings.fullValueMissSeconds);
  const cap = Number.isFinite(settings.keepAliveStartMultiple)
    ? Math.max(HISTOGRAM_BIN_SECONDS, settings.keepAliveStartMultiple * missSeconds)
    : Number.POSITIVE_INFINITY; // (∞ · a free miss would be NaN)
  const representative =
    total >= settings.minSamples &&
    outOfBounds / total <= settings.maxOutOfBoundsShare &&
    binCountCv(bins) >= settings.minBinCountCv;
  if (!representative) {
    return {
      policy: "fixed-keep-alive",
      preWarmSeconds: 0,
      keepAliveSeconds: Math.min(cap, settings.fixedKeepAliveSeconds * missCostWeight),
      reWarmAtSeconds: 0,
      missCostWeight,
    };
  }
  // Percentiles are over in-bounds idle times; bins are 1 minute, so head rounds down and tail up.
  const head = percentileBinUpperSeconds(bins, inBounds, 0.05);
  const tail = percentileBinUpperSeconds(bins, inBounds, 0.99) + HISTOGRAM_BIN_SECONDS;
  const preWarmSeconds = head * (1 - settings.marginFraction);
  const keepAliveSeconds = Math.min(
    cap,
    Math.max(0, tail * (1 + settings.marginFraction) - preWarmSeconds) * missCostWeight,
  );
  return {
    policy: "histogram",
    preWarmSeconds,
    keepAliveSeconds,
    reWarmAtSeconds: Math.max(0, preWarmSeconds - missSeconds),
    missCostWeight,
  };
}

export interface WarmPoolEndpointInput {
  endpointId: string;
  histogram: IdleTimeHistogram;
  /** Seconds since the endpoint last served a request; 0 while it is busy. */
  idleForSeconds: number;
  busyReplicas: number;
  minReplicas: number;
  maxReplicas: number;
  gpusPerReplica: number;
  bestNonWarmSeconds: number;
  /**
   * The endpoint's price of a second of wait (expected-cost windows). Null or absent: none was
   * set, and the windows spend at most a 10-minute keep-alive's idle time (the platform default).
   */
  gpuSecondsPerWaitSecond?: number | null;
  /** Idle times of similar endpoints together: the prior of a thin histogram. */
  priorHistogram?: IdleTimeHistogram;
  /** Request wait-seconds one miss has cost (bursts make it more than one start). */
  waitSecondsPerMiss?: number;
  /** The windows, when the caller computed them already from these inputs (a cache). */
  windows?: KeepAliveWindows;
}

/** The windows of one endpoint under `settings`: by expected cost, or the paper's rule. */
export function windowsFor(
  endpoint: Pick<
    WarmPoolEndpointInput,
    | "histogram"
    | "bestNonWarmSeconds"
    | "gpusPerReplica"
    | "gpuSecondsPerWaitSecond"
    | "priorHistogram"
    | "waitSecondsPerMiss"
  >,
  settings: WarmPoolSettings,
): KeepAliveWindows {
  if (settings.windows === "hybrid-histogram")
    return keepAliveWindows({
      histogram: endpoint.histogram,
      bestNonWarmSeconds: endpoint.bestNonWarmSeconds,
      settings,
    });
  return costOptimalWindows({
    histogram: endpoint.histogram,
    ...(endpoint.priorHistogram ? { prior: endpoint.priorHistogram } : {}),
    priorWeight: settings.priorWeight,
    bestNonWarmSeconds: endpoint.bestNonWarmSeconds,
    gpusPerReplica: endpoint.gpusPerReplica,
    gpuSecondsPerWaitSecond: endpoint.gpuSecondsPerWaitSecond ?? null,
    ...(endpoint.waitSecondsPerMiss !== undefined
      ? { waitSecondsPerMiss: endpoint.waitSecondsPerMiss }
      : {}),
  });
}

/** What a miss of this endpoint costs per GPU of a replica, in GPU-seconds: who gets the budget first. */
function missCostPerGpu(endpoint: WarmPoolEndpointInput, settings: WarmPoolSettings): number {
  if (settings.windows === "hybrid-histogram") return endpoint.bestNonWarmSeconds;
  const price = endpoint.gpuSecondsPerWaitSecond;
  if (price === undefined || price === null) return endpoint.bestNonWarmSeconds;
  const wait = endpoint.waitSecondsPerMiss ?? endpoint.bestNonWarmSeconds;
  return (price * wait) / Math.max(1, endpoint.gpusPerReplica) + endpoint.bestNonWarmSeconds;
}

export interface WarmPoolPlan {
  endpointId: string;
  windows: KeepAliveWindows;
  /** Idle warm replicas to hold now (the worker keeps, releases or pre-warms to match). */
  warmReplicas: number;
  reason: string;
}

/** The warm replicas each endpoint should hold now, within min/max and a GPU budget for the fleet. */
export function planWarmPool(input: {
  endpoints: readonly WarmPoolEndpointInput[];
  /** GPUs the warm pools may hold beyond what minReplicas forces. */
  gpuBudget: number;
  settings?: WarmPoolSettings;
}): WarmPoolPlan[] {
  const settings = input.settings ?? DEFAULT_WARM_POOL_SETTINGS;
  const drafts = input.endpoints.map((endpoint) => {
    const windows = endpoint.windows ?? windowsFor(endpoint, settings);
    const idle = Math.max(0, endpoint.idleForSeconds);
    const inWindow =
      windows.preWarmSeconds === 0
        ? idle < windows.keepAliveSeconds
        : idle >= windows.reWarmAtSeconds &&
          idle < windows.preWarmSeconds + windows.keepAliveSeconds;
    const room = Math.max(0, endpoint.maxReplicas - endpoint.busyReplicas);
    const forced = Math.min(room, Math.max(0, endpoint.minReplicas - endpoint.busyReplicas));
    const wanted = Math.min(room, Math.max(forced, inWindow ? 1 : 0));
    return { endpoint, windows, forced, wanted, inWindow };
  });

  // Optional warm replicas compete for the budget; the dearest miss is served first.
  let budget = Math.max(0, input.gpuBudget);
  const granted = new Map<string, number>();
  for (const draft of [...drafts].sort(
    (a, b) => missCostPerGpu(b.endpoint, settings) - missCostPerGpu(a.endpoint, settings),
  )) {
    const optional = draft.wanted - draft.forced;
    const gpus = Math.max(0, draft.endpoint.gpusPerReplica);
    const affordable = gpus === 0 ? optional : Math.min(optional, Math.floor(budget / gpus));
    budget -= affordable * gpus;
    granted.set(draft.endpoint.endpointId, affordable);
  }

  return drafts.map(({ endpoint, windows, forced, wanted, inWindow }) => {
    const extra = granted.get(endpoint.endpointId) ?? 0;
    const warmReplicas = forced + extra;
    const reason =
      forced > 0 && extra === 0 && wanted === forced
        ? `minReplicas ${endpoint.minReplicas} holds ${forced} warm`
        : wanted > warmReplicas
          ? `GPU budget spent: wanted ${wanted} warm`
          : inWindow
            ? `${windows.policy}: idle ${endpoint.idleForSeconds.toFixed(0)} s within keep-alive ${windows.keepAliveSeconds.toFixed(0)} s (miss costs ${endpoint.bestNonWarmSeconds.toFixed(1)} s)`
            : `${windows.policy}: idle ${endpoint.idleForSeconds.toFixed(0)} s outside the warm window: release`;
    return { endpointId: endpoint.endpointId, windows, warmReplicas, reason };
  });
}

// ---------------------------------------------------------------------------------------------
// Idle times and actions. The live worker and the trace replay both feed the histogram with
// observeCapacity and turn a plan into actions with warmPoolActions, so both keep the same pool.

/** What the warm pool remembers of an endpoint between decisions. */
export interface IdleTracker {
  histogram: IdleTimeHistogram;
  /** Since when capacity has been spare (a scale-down, the last request served); null: in use. */
  idleSinceMs: number | null;
}

export function emptyIdleTracker(): IdleTracker {
  return { histogram: emptyIdleTimeHistogram(), idleSinceMs: null };
}

/**
 * Capacity went spare (`surplus`: a scale-down, the last request finished) or was needed again
 * (`needed`: a scale-up, a request arrived). A `needed` after a `surplus` is one idle time; a
 * second `surplus` keeps the first (the idle period began then).
 */
export function observeCapacity(
  tracker: IdleTracker,
  change: "surplus" | "needed",
  atMs: number,
): IdleTracker {
  if (change === "surplus")
    return tracker.idleSinceMs === null ? { ...tracker, idleSinceMs: atMs } : tracker;
  if (tracker.idleSinceMs === null) return tracker;
  return {
    histogram: recordIdleTime(tracker.histogram, Math.max(0, atMs - tracker.idleSinceMs) / 1000),
    idleSinceMs: null,
  };
}

export function idleForSeconds(tracker: IdleTracker, nowMs: number): number {
  return tracker.idleSinceMs === null ? 0 : Math.max(0, nowMs - tracker.idleSinceMs) / 1000;
}

export interface WarmPoolActions {
  /** Surplus ready replicas to park as `warm` instead of stopping them. */
  park: number;
  /** Parked replicas to stop (their keep-alive is over, or the budget no longer holds them). */
  release: string[];
  /** New replicas to start and park: the histogram says the next request is due. */
  prewarm: number;
}

/**
 * Turns a plan into actions against what the endpoint holds. Never grows the pool past the
 * plan (so past maxReplicas − busy and the budget), and releases the longest-parked first.
 */
export function warmPoolActions(input: {
  plan: Pick<WarmPoolPlan, "warmReplicas" | "windows">;
  idleForSeconds: number;
  /** Parked replicas, longest parked first. */
  warm: readonly string[];
  /** Replicas on their way into the pool (being parked, or pre-warmed and still starting). */
  incoming: number;
  /** Ready replicas being drained now that could be parked instead of stopped. */
  surplusReady: number;
}): WarmPoolActions {
  const target = Math.max(0, input.plan.warmReplicas);
  const held = input.warm.length + Math.max(0, input.incoming);
  const excess = Math.max(0, held - target);
  const release = input.warm.slice(0, Math.min(excess, input.warm.length));
  const room = Math.max(0, target - held);
  const park = Math.min(Math.max(0, input.surplusReady), room);
  const { windows } = input.plan;
  const due =
    windows.preWarmSeconds > 0 &&
    input.idleForSeconds >= windows.reWarmAtSeconds &&
    input.idleForSeconds < windows.preWarmSeconds + windows.keepAliveSeconds;
  return { park, release: [...release], prewarm: due ? room - park : 0 };
}
