import {
  simulateColdStart,
  type ColdStartScenarioInput,
  type ScenarioHost,
} from "../cold-start-model/index";
import type { StartPath } from "../vocabulary/index";
import { scenarioPeerFrom } from "./enumerate-start-options";
import type {
  Locality,
  PeerSource,
  SchedulingDeployment,
  SchedulingSnapshot,
  SleepingReplica,
} from "./start-option";
import type { HistoryCell } from "./update-history-stat";

// Time-to-ready of one option (node × path × locality): the physics model as the prior,
// corrected by what this deployment, its endpoint and the fleet have actually measured.
//
// Shrinkage, in log space (x = ln seconds), from coarse to fine: prior → fleet (same
// model-size bucket) → endpoint → deployment. Each level L starts from its parent's estimate
// (m_p, s²_p, κ'_p) and its own cell (n, x̄, M2):
//
//   w     = min(κ'_p, κ_L)                      the parent counts as at most κ_L samples
//   κ'_L  = w + n
//   m_L   = (w · m_p + n · x̄) / κ'_L            posterior mean of ln seconds
//   s²_L  = (w · s²_p + M2 + (w · n / κ'_L) · (x̄ - m_p)²) / κ'_L
//
// which is the Normal-Inverse-Gamma update with the parent as a pseudo-sample of size w.
// Capping w by the parent's own κ' means a parent that rests on little data is itself a weak
// anchor. The prior level is m_0 = ln(physics seconds), s²_0 = priorLogSd², κ'_0 = priorPseudoCount.
// For the finest level (m, s², κ'):
//
//   Var[μ]          = s² / κ'                   (what Thompson sampling draws from)
//   Var[next start] = s² · (1 + 1/κ')           (posterior predictive, normal approximation)
//   mean seconds    = exp(m + Var[next]/2)      (lognormal mean)
//   p90 seconds     = exp(m + 1.2816 · √Var[next])
//   p10 seconds     = exp(m − 1.2816 · √Var[next])   (p10–p90: the next start's 80% interval)
//
// As n grows at any level, m moves from m_p to x̄ (distance w·|m_p - x̄| / (w + n)).

export interface ShrinkageSettings {
  /** Spread of the physics model around reality, in ln seconds (0.35 ≈ ×1.4 at 1 sd). */
  priorLogSd: number;
  /** How many observed starts the physics prior is worth. */
  priorPseudoCount: number;
  /** How many samples a parent level is worth at most, per level. */
  fleetPseudoCount: number;
  endpointPseudoCount: number;
  deploymentPseudoCount: number;
  /** Floor on s²: identical measurements do not make a start deterministic. */
  minLogVariance: number;
}

export const DEFAULT_SHRINKAGE: ShrinkageSettings = {
  // Calibrated on the fidelity suite (`sim:fidelity`): with it, the prior's p10–p90 holds
  // 28 of 34 published values under the leave-one-source-out predictions (82%, the stated
  // 80% ± 5%); 0.5 held 91%, wider than it says.
  priorLogSd: 0.35,
  priorPseudoCount: 2,
  fleetPseudoCount: 4,
  endpointPseudoCount: 4,
  deploymentPseudoCount: 2,
  minLogVariance: 0.05 ** 2,
};

export interface HistoryForOption {
  deployment?: HistoryCell;
  endpoint?: HistoryCell;
  fleet?: HistoryCell;
}

export interface TimeToReadyPrediction {
  meanSeconds: number;
  /** With p90Seconds, the interval the next start falls in 80% of the time. */
  p10Seconds: number;
  p90Seconds: number;
  /** Observed starts of this deployment behind the estimate (the finest cell). */
  samples: number;
  samplesByScope: { deployment: number; endpoint: number; fleet: number };
  priorSeconds: number;
  /** Posterior mean of ln seconds. */
  meanLog: number;
  /** Variance of the posterior mean of ln seconds (Thompson sampling draws from this). */
  meanLogVariance: number;
  /** Posterior predictive variance of the next start's ln seconds. */
  predictiveLogVariance: number;
}

const Z90 = 1.2815515655446004;

interface LevelEstimate {
  meanLog: number;
  variance: number;
  pseudoCount: number;
}

function shrinkTowardsParent(
  parent: LevelEstimate,
  cell: HistoryCell | undefined,
  maxParentWeight: number,
): LevelEstimate {
  const weight = Math.min(parent.pseudoCount, maxParentWeight);
  const n = cell?.samples ?? 0;
  if (!cell || n === 0) return { ...parent, pseudoCount: weight };
  const pseudoCount = weight + n;
  const meanLog = (weight * parent.meanLog + n * cell.meanLog) / pseudoCount;
  const between = ((weight * n) / pseudoCount) * (cell.meanLog - parent.meanLog) ** 2;
  const variance = (weight * parent.variance + cell.m2Log + between) / pseudoCount;
  return { meanLog, variance, pseudoCount };
}

/** Posterior time-to-ready of one option from its physics prior and its history cells. */
export function predictTimeToReady(input: {
  priorSeconds: number;
  history: HistoryForOption;
  settings?: ShrinkageSettings;
}): TimeToReadyPrediction {
  const settings = input.settings ?? DEFAULT_SHRINKAGE;
  const { history } = input;
  const priorSeconds = Math.max(input.priorSeconds, 0.01);
  const prior: LevelEstimate = {
    meanLog: Math.log(priorSeconds),
    variance: settings.priorLogSd ** 2,
    pseudoCount: settings.priorPseudoCount,
  };
  const fleet = shrinkTowardsParent(prior, history.fleet, settings.fleetPseudoCount);
  const endpoint = shrinkTowardsParent(fleet, history.endpoint, settings.endpointPseudoCount);
  const finest = shrinkTowardsParent(endpoint, history.deployment, settings.deploymentPseudoCount);
  const variance = Math.max(finest.variance, settings.minLogVariance);
  const meanLogVariance = variance / finest.pseudoCount;
  const predictiveLogVariance = variance * (1 + 1 / finest.pseudoCount);
  return {
    meanSeconds: Math.exp(finest.meanLog + predictiveLogVariance / 2),
    p10Seconds: Math.exp(finest.meanLog - Z90 * Math.sqrt(predictiveLogVariance)),
    p90Seconds: Math.exp(finest.meanLog + Z90 * Math.sqrt(predictiveLogVariance)),
    samples: history.deployment?.samples ?? 0,
    samplesByScope: {
      deployment: history.deployment?.samples ?? 0,
      endpoint: history.endpoint?.samples ?? 0,
      fleet: history.fleet?.samples ?? 0,
    },
    priorSeconds,
    meanLog: finest.meanLog,
    meanLogVariance,
    predictiveLogVariance,
  };
}

/**
 * The physics model's seconds for one option, noise off. Locality changes the scenario:
 * a local snapshot skips `fetch_snapshot`; a cached image (plain or eStargz) skips the bytes
 * on the wire, so it is the pull path without its `pull` phase (layers already unpacked).
 */
export function physicsPriorSeconds(input: {
  host: ScenarioHost;
  deployment: SchedulingDeployment;
  path: StartPath;
  locality: Locality;
  snapshot?: Pick<SchedulingSnapshot, "bytes" | "sleepLevel">;
  /** The wake path: how the sleeping engine sleeps (level 1 when absent). */
  sleeping?: Pick<SleepingReplica, "sleepLevel">;
  /** The restore path: the option stages its weights apart (StartOption.stageWeights). */
  stageWeights?: boolean;
  /**
   * The peer path: the serving replica the copy comes from (StartOption.peerSource); a
   * level-2 restore: the one that sends its weights.
   */
  peerSource?: Pick<PeerSource, "host" | "transfersInFlight">;
  /** The peer path: GPUs the replica spans, each copying its shard (1 when absent). */
  gpus?: number;
  /** The peer path: the image is mounted from its eStargz variant (StartOption.peerLazyImage). */
  peerLazyImage?: boolean;
  /** Pull and lazy: the stored kernel cache fetched before compile (StartOption.kernelCache). */
  kernelCacheBytes?: number;
}): number {
  const { deployment, path, locality } = input;
  const imageCached =
    locality === "image-cached" && (path === "pull" || path === "lazy" || path === "peer");
  // A cached image skips the pull; the peer path keeps its own phases after it.
  const modelPath: StartPath = imageCached && path !== "peer" ? "pull" : path;
  const scenario: ColdStartScenarioInput = {
    seed: 1,
    noise: false,
    host: input.host,
    image: {
      // A cached image is local whatever its format: read as the plain one.
      format:
        modelPath === "lazy" || (modelPath === "peer" && input.peerLazyImage && !imageCached)
          ? "estargz"
          : "oci",
      layers: [...deployment.imageLayers],
      readFraction: deployment.imageReadFraction,
    },
    engine: deployment.engine,
    path: modelPath,
    restore: {
      local: locality !== "snapshot-store",
      ...(input.snapshot
        ? { snapshotBytes: input.snapshot.bytes, sleepLevel: input.snapshot.sleepLevel }
        : {}),
      stageWeights: input.stageWeights ?? false,
      ...(path === "restore" && input.peerSource ? { weightsFrom: "peer" as const } : {}),
    },
    ...(input.sleeping ? { wake: { sleepLevel: input.sleeping.sleepLevel } } : {}),
    ...(input.peerSource ? { peer: scenarioPeerFrom(input.peerSource, input.gpus ?? 1) } : {}),
    ...(input.kernelCacheBytes !== undefined
      ? { kernelCache: { bytes: input.kernelCacheBytes } }
      : {}),
  };
  const result = simulateColdStart(scenario);
  const skipped = imageCached
    ? result.phases
        .filter((timing) => timing.phase === "pull")
        .reduce((sum, timing) => sum + timing.seconds, 0)
    : 0;
  return Math.max(0.01, result.totalSeconds - skipped);
}
