import { KPA_DEFAULTS } from "./autoscale-from-signal.ts";
import {
  HISTOGRAM_BIN_SECONDS,
  HISTOGRAM_BINS,
  type IdleTimeHistogram,
  type KeepAliveWindows,
} from "./idle-time-histogram.ts";

// The warm pool's windows chosen by expected cost: a second of a request's wait is
// worth `gpuSecondsPerWaitSecond` GPU-seconds of idle capacity (the endpoint's price), and
// every window — keep the replica from the moment it goes idle, or release it and re-warm it
// ahead of the next request — is weighed by what it is expected to cost over the endpoint's
// idle-time distribution:
//
//   cost = price · (seconds requests wait) + GPU-seconds held idle
//
// A replica that is starting is working, not idle: its GPU time is what any start costs, the
// same under every window, and it is reported apart (bench:replay's gpuHours). For an idle
// gap G (from the scale-down to the next request; S the best non-warm start, W the request
// wait-seconds one miss costs, g the GPUs of a replica):
//   keep for K from the start (P = 0):
//     G < K            g · G                       served warm
//     G ≥ K            g · K + price · W           released, then a cold start
//   release at once, re-warm at R = P − S so the replica is ready at P, keep it until P + K:
//     G < R            price · W                   a miss before the re-warm began
//     R ≤ G < P        price · W · (P − G)/S       the re-warm still starting
//     P ≤ G < P + K    g · (G − P)                 served by the re-warmed replica
//     G ≥ P + K        g · K + price · W           re-warmed for nothing, then a miss
//
// Idle times come in 1-minute bins (a gap is taken at its bin's middle); P and K are bin edges,
// K up to the histogram's 4 h; P is tried at every bin up to the idle times' first quartile, or,
// when there are many, where the endpoint's own idle times begin and at a few low quantiles. The histogram borrows from similar endpoints' pooled one as
// `priorWeight` pseudo-samples, so an endpoint with little history starts from theirs and
// moves to its own as it accumulates (the same shrinkage the path predictor uses). With no
// history at all the window is ski rental's break-even: keep while keeping costs less than one
// miss (2-competitive against any future).
//
// Whatever the price, the plan minimises price·wait + idle GPU time over the same choices, so
// a higher price never plans more expected wait nor less expected idle GPU time (revealed
// preference: property-tested).

export interface CostOptimalWindowsInput {
  histogram: IdleTimeHistogram;
  /** Similar endpoints' idle times together (e.g. the org's), the prior of a thin histogram. */
  prior?: IdleTimeHistogram;
  /** How many of the endpoint's own idle times the prior is worth. */
  priorWeight?: number;
  /** S: predicted seconds of the best start that is not a handover. */
  bestNonWarmSeconds: number;
  /** g: GPUs one replica holds. */
  gpusPerReplica: number;
  /**
   * The price: GPU-seconds one second of one request's wait is worth. Null: no price was set,
   * and the windows spend no more expected idle GPU time than keeping the replica for
   * `idleBudgetKeepAliveSeconds` would, where it saves the most wait (the platform's default).
   */
  gpuSecondsPerWaitSecond: number | null;
  /** With no price: the keep-alive whose expected idle time is the budget (default 10 min). */
  idleBudgetKeepAliveSeconds?: number;
  /** W: request wait-seconds one miss costs (more than S when requests come in bursts). */
  waitSecondsPerMiss?: number;
  /**
   * Whether releasing and re-warming ahead of the next request is a choice (false for a
   * surplus replica of a busy endpoint: only how long to keep it).
   */
  preWarm?: boolean;
}

export interface CostOptimalWindows extends KeepAliveWindows {
  policy: "expected-cost";
  /** Expected price·wait + GPU-seconds per idle gap under the chosen windows. */
  expectedCost: number;
  /** Its parts: expected request wait-seconds and idle GPU-seconds per idle gap. */
  expectedWaitSeconds: number;
  expectedIdleGpuSeconds: number;
}

export const DEFAULT_PRIOR_WEIGHT = 3;
/**
 * With no price set, the windows may idle as long as a 10-minute keep-alive would, in
 * expectation (pull-keepalive-10m, the usual serverless default, is what users compare with):
 * ten minutes from the last request, of which the autoscaler's stable window has passed
 * before the warm pool decides.
 */
export const DEFAULT_IDLE_BUDGET_KEEP_ALIVE_SECONDS = 600 - KPA_DEFAULTS.stableWindowSeconds;
/** Pre-warm points tried: every bin edge up to the idle times' this quantile. */
const PREWARM_QUANTILE = 0.25;

export function costOptimalWindows(input: CostOptimalWindowsInput): CostOptimalWindows {
  const S = Math.max(0, input.bestNonWarmSeconds);
  const g = Math.max(1, input.gpusPerReplica);
  const budgeted = input.gpuSecondsPerWaitSecond === null;
  const price = Math.max(0, input.gpuSecondsPerWaitSecond ?? 0);
  const budgetK = Math.max(
    0,
    input.idleBudgetKeepAliveSeconds ?? DEFAULT_IDLE_BUDGET_KEEP_ALIVE_SECONDS,
  );
  const W = Math.max(0, input.waitSecondsPerMiss ?? S);
  const missCost = price * W;
  const mass = idleTimeMass(input.histogram, [
    ...(input.prior
      ? [{ histogram: input.prior, weight: input.priorWeight ?? DEFAULT_PRIOR_WEIGHT }]
      : []),
  ]);
  if (!mass) {
    // Ski rental's break-even: keeping for K costs g·K, one miss costs missCost. With a
    // budget and nothing known of the gaps, the budget's keep-alive itself.
    const keep = Math.min(
      HISTOGRAM_BINS * HISTOGRAM_BIN_SECONDS,
      budgeted ? budgetK : missCost / g,
    );
    return {
      policy: "expected-cost",
      preWarmSeconds: 0,
      keepAliveSeconds: keep,
      reWarmAtSeconds: 0,
      missCostWeight: 1,
      expectedCost: missCost,
      expectedWaitSeconds: W,
      expectedIdleGpuSeconds: 0,
    };
  }
  const { p, beyond } = mass;
  const n = p.length;
  const mid = (i: number) => (i + 0.5) * HISTOGRAM_BIN_SECONDS;
  // Prefix sums: mass below bin j, and mass × gap below bin j.
  const below = new Float64Array(n + 1);
  const gapBelow = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) {
    below[i + 1] = below[i]! + p[i]!;
    gapBelow[i + 1] = gapBelow[i]! + p[i]! * mid(i);
  }
  const total = below[n]! + beyond;
  const massFrom = (j: number) => total - below[Math.min(j, n)]!;

  let best = {
    cost: Number.POSITIVE_INFINITY,
    wait: 0,
    gpu: 0,
    P: 0,
    K: 0,
  };
  // With a budget: the idle time keeping for budgetK (to its bin) would spend, over the same gaps.
  const kB = Math.min(n, Math.floor(budgetK / HISTOGRAM_BIN_SECONDS));
  const budget = budgeted
    ? g * (gapBelow[kB]! + massFrom(kB) * kB * HISTOGRAM_BIN_SECONDS) + 1e-6 * total
    : Number.POSITIVE_INFINITY;
  const consider = (P: number, K: number, wait: number, gpu: number) => {
    // (gpu: idle GPU-seconds) With a budget: the least wait within it; else the least cost.
    if (gpu > budget) return;
    const cost = budgeted ? wait : price * wait + gpu;
    // Of windows that cost the same (no idle time falls between them), the one idling least,
    // then the shorter one.
    if (
      cost < best.cost - 1e-9 ||
      (Math.abs(cost - best.cost) <= 1e-9 &&
        (gpu < best.gpu - 1e-9 || (Math.abs(gpu - best.gpu) <= 1e-9 && P + K < best.P + best.K)))
    )
      best = { cost, wait, gpu, P, K };
  };

  // Keep from the start for K = k bins.
  for (let k = 0; k <= n; k++) {
    const K = k * HISTOGRAM_BIN_SECONDS;
    const missed = massFrom(k);
    consider(0, K, missed * W, g * (gapBelow[k]! + missed * K));
  }

  // Release, re-warm ready at P = j bins, keep K = k bins after it.
  let jMax = 0;
  if (input.preWarm !== false)
    while (jMax < n && below[jMax + 1]! <= PREWARM_QUANTILE * total) jMax++;
  for (const j of preWarmPoints(input.histogram.bins, below, total, jMax)) {
    const P = j * HISTOGRAM_BIN_SECONDS;
    const R = Math.max(0, P - S);
    // Bins before P: a miss (gap before R) or a partial wait (the re-warm still starting).
    // r: the first bin whose middle is at or past R (mid(i) = (i + ½)·bin).
    const r = Math.min(j, Math.max(0, Math.ceil(R / HISTOGRAM_BIN_SECONDS - 0.5)));
    const missed = below[r]!;
    const starting = below[j]! - below[r]!;
    const startingGaps = gapBelow[j]! - gapBelow[r]!;
    const waitBefore = missed * W + (S > 0 ? (W * (P * starting - startingGaps)) / S : 0);
    for (let k = 0; j + k <= n; k++) {
      const K = k * HISTOGRAM_BIN_SECONDS;
      const servedMass = below[j + k]! - below[j]!;
      const servedIdle = gapBelow[j + k]! - gapBelow[j]! - servedMass * P;
      const late = massFrom(j + k);
      const wait = waitBefore + late * W;
      const idle = g * servedIdle + late * g * K;
      consider(P, K, wait, idle);
    }
  }
  const norm = total > 0 ? total : 1;
  return {
    policy: "expected-cost",
    preWarmSeconds: best.P,
    keepAliveSeconds: best.K,
    reWarmAtSeconds: best.P > 0 ? Math.max(0, best.P - S) : 0,
    missCostWeight: 1,
    expectedCost: (price * best.wait + best.gpu) / norm,
    expectedWaitSeconds: best.wait / norm,
    expectedIdleGpuSeconds: best.gpu / norm,
  };
}

/** Pre-warm points tried, at most this many: the search stays O(bins) per decision. */
const MAX_PREWARM_POINTS = 24;
const PREWARM_QUANTILES = [0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25];

/**
 * The pre-warm points worth trying (bins 1..jMax): where the endpoint's own idle times begin
 * (a re-warm pays when the replica is ready as a request may come), and where the mixed
 * distribution reaches a few low quantiles; every bin when there are few enough.
 */
function preWarmPoints(
  own: readonly number[],
  below: Float64Array,
  total: number,
  jMax: number,
): number[] {
  if (jMax <= MAX_PREWARM_POINTS) return Array.from({ length: jMax }, (_, i) => i + 1);
  const points = new Set<number>();
  for (let i = 1; i <= jMax && points.size < MAX_PREWARM_POINTS - PREWARM_QUANTILES.length; i++)
    if ((own[i] ?? 0) > 0) points.add(i);
  let j = 1;
  for (const q of PREWARM_QUANTILES) {
    while (j < jMax && below[j + 1]! <= q * total) j++;
    points.add(j);
  }
  return [...points].sort((a, b) => a - b);
}

/**
 * The idle-time distribution as mass per bin (own counts plus each prior's shape worth its
 * weight in samples) and the mass beyond the histogram; undefined when there is none.
 */
function idleTimeMass(
  own: IdleTimeHistogram,
  priors: readonly { histogram: IdleTimeHistogram; weight: number }[],
): { p: Float64Array; beyond: number } | undefined {
  const n = own.bins.length;
  const p = new Float64Array(n);
  let total = own.outOfBounds;
  for (let i = 0; i < n; i++) {
    p[i] = own.bins[i] ?? 0;
    total += p[i]!;
  }
  let beyond = own.outOfBounds;
  for (const { histogram: prior, weight } of priors) {
    const priorTotal = prior.bins.reduce((a, b) => a + b, 0) + prior.outOfBounds;
    if (priorTotal <= 0 || weight <= 0) continue;
    const scale = weight / priorTotal;
    for (let i = 0; i < n; i++) p[i]! += (prior.bins[i] ?? 0) * scale;
    beyond += prior.outOfBounds * scale;
    total += weight;
  }
  if (total === 0) return undefined;
  return { p, beyond };
}
