import { comparedSeconds, type CalibrationRow } from "../calibration-scenarios";
import { PHYSICS, type Physics } from "../physical-constants";
import { simulateColdStart } from "../simulate-cold-start";
import type { FidelityCase } from "./fidelity-case";
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
/** The mean breaks the median's plateaus without letting one outlier steer the fit. */
const MEAN_WEIGHT = 0.1;

function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export { median };

/**
 * What the fit minimises: the median absolute log error over the cases (log, so 2x too slow
 * and 2x too fast weigh the same), a little of the mean, and a steep price for any
 * field-notes row pushed beyond ±10%.
 */
export function fitObjective(
  physics: Physics,
  cases: readonly FidelityCase[],
  anchors: readonly CalibrationRow[],
): number {
  const caseErrors = cases.map((fidelityCase) => {
    const prediction = predictCase(fidelityCase, physics);
    return Math.abs(Math.log(prediction.predictedSeconds / prediction.publishedSeconds));
  });
  const mean = caseErrors.reduce((sum, error) => sum + error, 0) / Math.max(1, caseErrors.length);
  const allowed = Math.log(1 + ANCHOR_TOLERANCE);
  const anchorPenalty = anchors.reduce((sum, row) => {
    const modelled = comparedSeconds(row, simulateColdStart(row.scenario, {}, physics));
    return sum + Math.max(0, Math.abs(Math.log(modelled / row.targetSeconds)) - allowed);
  }, 0);
  return median(caseErrors) + MEAN_WEIGHT * mean + ANCHOR_WEIGHT * anchorPenalty;
}

export interface PhysicsFit {
  /** Fitted value of every parameter, by name. */
  overrides: Record<string, number>;
  physics: Physics;
  objective: number;
  evaluations: number;
}

/**
 * Coordinate descent in log space: try each parameter a step up and down, keep what lowers
 * the objective, halve the step when nothing does. Deterministic, derivative-free (the model
 * has min/max kinks everywhere), and every value stays inside its physical range.
 */
export function fitPhysics(
  cases: readonly FidelityCase[],
  anchors: readonly CalibrationRow[],
  options: { maxSweeps?: number; base?: Physics } = {},
): PhysicsFit {
  const base = options.base ?? PHYSICS;
  const maxSweeps = options.maxSweeps ?? 60;
  const clamp = (parameter: FittedParameter, value: number) =>
    Math.min(parameter.max, Math.max(parameter.min, value));
  const values = Object.fromEntries(
    FITTED_PARAMETERS.map((parameter) => [parameter.name, clamp(parameter, parameter.read(base))]),
  );
  let evaluations = 0;
  const score = (candidate: Record<string, number>) => {
    evaluations++;
    return fitObjective(physicsWith(candidate, base), cases, anchors);
  };
  let best = score(values);
  let step = Math.log(2);
  const smallestStep = Math.log(1.01);
  for (let sweep = 0; sweep < maxSweeps && step >= smallestStep; sweep++) {
    let improved = false;
    for (const parameter of FITTED_PARAMETERS) {
      for (const direction of [1, -1]) {
        const current = values[parameter.name]!;
        const next = clamp(parameter, current * Math.exp(direction * step));
        if (next === current) continue;
        const candidate = { ...values, [parameter.name]: next };
        const candidateScore = score(candidate);
        if (candidateScore < best - 1e-9) {
          best = candidateScore;
          values[parameter.name] = next;
          improved = true;
          break;
        }
      }
    }
    if (!improved) step /= 2;
  }
  return { overrides: values, physics: physicsWith(values, base), objective: best, evaluations };
}
