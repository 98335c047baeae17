import { comparedSeconds, type CalibrationRow } from "../calibration-scenarios";
import { PHYSICS, type Physics } from "../physical-constants";
import { simulateColdStart } from "../simulate-cold-start";
import type { FidelityCase } from "./fidelity-case";
import { quantile } from "../../statistics/quantile";
import { predictCase } from "./predict-case";

// Fitting a few of the model's physical constants to published cases, and checking the fit
// honestly (leave-one-source-out). Nothing here changes PHYSICS: a fit is a set of overrides
// that a caller passes to the model explicitly.

/** One constant the fit may move, inside the range its physics allows. */
export interface FittedParameter {
  name: string;
  /** What the quantity is, for the report. */
  meaning: string;
  min: number;
  max: number;
  read: (physics: Physics) => number;
  write: (physics: Physics, value: number) => Physics;
}

const scaleGzip = (physics: Physics, factor: number): Physics => {
  const rates = physics.decompressBytesPerSecondPerCore;
  const scaled = (entry: (typeof rates)["gzip-9"]) => ({
    weights: entry.weights * factor,
    code: entry.code * factor,
    data: entry.data * factor,
  });
  return {
    ...physics,
    decompressBytesPerSecondPerCore: {
      ...rates,
      "gzip-9": scaled(PHYSICS.decompressBytesPerSecondPerCore["gzip-9"]),
      "gzip-6": scaled(PHYSICS.decompressBytesPerSecondPerCore["gzip-6"]),
    },
  };
};

const scalar = <K extends keyof Physics>(
  key: K,
  meaning: string,
  min: number,
  max: number,
): FittedParameter => ({
  name: key,
  meaning,
  min,
  max,
  read: (physics) => physics[key] as number,
  write: (physics, value) => ({ ...physics, [key]: value }),
});

/**
 * The small vector the fit moves: per-byte rates and per-operation costs the model already
 * has, each bounded by what the hardware can physically do (not by what fits best).
 */
export const FITTED_PARAMETERS: readonly FittedParameter[] = [
  scalar(
    "registryStreamBytesPerSecond",
    "one HTTPS blob stream from a registry (bytes/s)",
    20e6,
    400e6,
  ),
  {
    name: "gzipInflateScale",
    meaning: "gzip inflate speed of one core, as a multiple of today's per-content rates",
    min: 0.5,
    max: 4,
    // Today's rates are the unit: 1 means the production table.
    read: (physics) =>
      physics.decompressBytesPerSecondPerCore["gzip-6"].code /
      PHYSICS.decompressBytesPerSecondPerCore["gzip-6"].code,
    write: scaleGzip,
  },
  scalar("loaderSetupSeconds", "open weight files, parse headers, allocate (s)", 0.05, 5),
  scalar("pageableCopyFraction", "pageable host->GPU copy as a share of the pinned rate", 0.2, 1),
  scalar("criuBaseSeconds", "CRIU process tree, namespaces, fds before pages (s)", 0.05, 5),
  scalar(
    "criuPageRestoreBytesPerSecond",
    "CRIU page restore into the new address space (bytes/s)",
    0.3e9,
    30e9,
  ),
  scalar(
    "cudaCheckpointRestoreBytesPerSecond",
    "device memory cuda-checkpoint puts back (bytes/s); at most a PCIe Gen5 x16 link",
    0.1e9,
    50e9,
  ),
  scalar("engineWakeSeconds", "re-allocate the KV cache, first forward pass (s)", 0.02, 5),
  scalar(
    "pageCacheReaderBytesPerSecond",
    "one buffered reader copying cached file bytes: page faults and one core's memcpy (bytes/s)",
    1e9,
    20e9,
  ),
  scalar(
    "pageCacheReadBytesPerSecond",
    "many readers of cached bytes together: a copy's share of memory bandwidth (bytes/s)",
    5e9,
    200e9,
  ),
];

/** Overrides by parameter name; a name not in FITTED_PARAMETERS is refused. */
export type PhysicsOverrides = Readonly<Record<string, number>>;

/** `base` with the overrides applied (today's constants when there are none). */
export function physicsWith(overrides: PhysicsOverrides, base: Physics = PHYSICS): Physics {
  let physics = base;
  for (const [name, value] of Object.entries(overrides)) {
    const parameter = FITTED_PARAMETERS.find((candidate) => candidate.name === name);
    if (!parameter) throw new Error(`unknown fitted parameter ${name}`);
    physics = parameter.write(physics, value);
  }
  return physics;
}

/** Today's value of every fitted parameter. */
export function currentParameterValues(physics: Physics = PHYSICS): Record<string, number> {
  return Object.fromEntries(FITTED_PARAMETERS.map((p) => [p.name, p.read(physics)]));
}

/** Field-notes rows may drift this far before the fit pays for it (the ±10% target). */
export const ANCHOR_TOLERANCE = 0.1;
/** Cost of an anchor beyond tolerance, per unit of log error: a near-hard constraint. */
const ANCHOR_WEIGHT = 20;
/**
 * Scale of the robust loss (log units, ~10%): below it a case's error counts about
 * squared, above it about linearly, so no one case the model cannot explain steers the fit,
 * yet the loss stays smooth enough for a pattern search (a median has flat plateaus).
 */
const ROBUST_SCALE = 0.1;

/** The project's one quantile (statistics/quantile.ts) at 0.5; 0 for no values. */
export const median = (values: readonly number[]): number => quantile(values, 0.5) ?? 0;

/** Pseudo-Huber loss of one log error. */
function robustLoss(logError: number): number {
  return ROBUST_SCALE * (Math.sqrt(1 + (logError / ROBUST_SCALE) ** 2) - 1);
}

/**
 * What the fit minimises: the mean robust loss of the cases' log errors (log, so 2x too slow
 * and 2x too fast weigh the same), and a steep price for any field-notes row pushed beyond
 * ±10%.
 */
export function fitObjective(
  physics: Physics,
  cases: readonly FidelityCase[],
  anchors: readonly CalibrationRow[],
): number {
  const caseLoss = cases.reduce((sum, fidelityCase) => {
    const prediction = predictCase(fidelityCase, physics);
    return sum + robustLoss(Math.log(prediction.predictedSeconds / prediction.publishedSeconds));
  }, 0);
  const allowed = Math.log(1 + ANCHOR_TOLERANCE);
  const anchorPenalty = anchors.reduce((sum, row) => {
    const modelled = comparedSeconds(row, simulateColdStart(row.scenario, {}, physics));
    return sum + Math.max(0, Math.abs(Math.log(modelled / row.targetSeconds)) - allowed);
  }, 0);
  return caseLoss / Math.max(1, cases.length) + ANCHOR_WEIGHT * anchorPenalty;
}

export interface PhysicsFit {
  /** Fitted value of every parameter, by name. */
  overrides: Record<string, number>;
  physics: Physics;
  objective: number;
  evaluations: number;
}

/**
 * Hooke–Jeeves pattern search in log space: explore each parameter a step up and down,
 * then keep moving along the direction that helped (which follows valleys where two
 * constants trade against each other, e.g. CRIU's page rate and cuda-checkpoint's), and
 * halve the step when nothing helps. Deterministic and derivative-free (the model has
 * min/max kinks everywhere); every value stays inside its physical range.
 */
export function fitPhysics(
  cases: readonly FidelityCase[],
  anchors: readonly CalibrationRow[],
  options: { maxEvaluations?: number; base?: Physics } = {},
): PhysicsFit {
  const base = options.base ?? PHYSICS;
  const maxEvaluations = options.maxEvaluations ?? 3000;
  // The search runs on log values: a step multiplies a constant by the same factor everywhere.
  const bounds = FITTED_PARAMETERS.map((p) => [Math.log(p.min), Math.log(p.max)] as const);
  const clamp = (point: number[]) =>
    point.map((value, i) => Math.min(bounds[i]![1], Math.max(bounds[i]![0], value)));
  const toOverrides = (point: readonly number[]) =>
    Object.fromEntries(
      // exp(log(max)) can land a rounding error past max: clamp again in linear space.
      FITTED_PARAMETERS.map((p, i) => [
        p.name,
        Math.min(p.max, Math.max(p.min, Math.exp(point[i]!))),
      ]),
    );
  let evaluations = 0;
  const score = (point: readonly number[]) => {
    evaluations++;
    return fitObjective(physicsWith(toOverrides(point), base), cases, anchors);
  };
  const explore = (start: number[], startScore: number, step: number) => {
    let point = start;
    let best = startScore;
    for (let i = 0; i < point.length; i++) {
      for (const direction of [1, -1]) {
        const candidate = clamp(point.map((v, j) => (j === i ? v + direction * step : v)));
        if (candidate[i] === point[i]) continue;
        const candidateScore = score(candidate);
        if (candidateScore < best - 1e-12) {
          point = candidate;
          best = candidateScore;
          break;
        }
      }
    }
    return { point, score: best };
  };

  const search = (start: number[], budget: number) => {
    const stopAt = evaluations + budget;
    let basePoint = clamp(start);
    let baseScore = score(basePoint);
    let step = Math.log(4);
    const smallestStep = Math.log(1.002);
    while (step >= smallestStep && evaluations < stopAt) {
      let moved = explore(basePoint, baseScore, step);
      if (moved.score >= baseScore) {
        step /= 2;
        continue;
      }
      // Pattern moves: jump along the last improvement and explore around the landing point.
      while (evaluations < stopAt) {
        const previous = basePoint;
        basePoint = moved.point;
        baseScore = moved.score;
        const jump = clamp(basePoint.map((v, i) => 2 * v - previous[i]!));
        const landed = explore(jump, score(jump), step);
        if (landed.score >= baseScore) break;
        moved = landed;
      }
    }
    return { point: basePoint, score: baseScore };
  };

  // Three starts that know nothing of the cases: a quarter, the middle and three quarters
  // of every physical range (log space). Starting from the production constants instead
  // would hand each leave-one-source-out fold what those constants learned from the source
  // it leaves out. The best end point wins.
  const starts = [0.25, 0.5, 0.75].map((share) =>
    bounds.map(([low, high]) => low + share * (high - low)),
  );
  let best = { point: starts[0]!, score: Number.POSITIVE_INFINITY };
  for (const start of starts) {
    const found = search(start, maxEvaluations / starts.length);
    if (found.score < best.score) best = found;
  }
  const basePoint = best.point;
  const baseScore = best.score;
  const overrides = toOverrides(basePoint);
  return { overrides, physics: physicsWith(overrides, base), objective: baseScore, evaluations };
}
