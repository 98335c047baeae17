import { comparedSeconds, type CalibrationRow } from "../calibration-scenarios";
import { PHYSICS, type Physics } from "../physical-constants";
import { simulateColdStart } from "../simulate-cold-start";
import type { FidelityCase } from "./fidelity-case";
import { quantile } from "../../statistics/quantile";
import { predictCase } from "./predict-case";

// Fitting a few of the model's physical constants to published cases, and checking the fit
// honestly (leave-one-source-out). Nothing here changes PHYSICS: a fit is a set of overrides
// that a caller passes to the model explicitly.

/**
 * What the physics says of a constant before any fidelity case is seen: a central value and a
 * spread (lognormal), each derived from hardware figures, vendor guidance or the field notes,
 * never from the suite. The fit weighs it with the cases (priorLoss), so a constant no
 * training case informs (a source left out by cross-validation) stays where the physics puts
 * it instead of wandering to wherever its range lets it.
 */
export interface PhysicalPrior {
  value: number;
  /** One standard deviation in natural-log units: ln 2 means "within ×0.5–×2 about 2 times in 3". */
  logSd: number;
  /** Where the value comes from. */
  basis: string;
}

/** One constant the fit may move, inside the range its physics allows. */
export interface FittedParameter {
  name: string;
  /** What the quantity is, for the report. */
  meaning: string;
  min: number;
  max: number;
  prior: PhysicalPrior;
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
  prior: PhysicalPrior,
): FittedParameter => ({
  name: key,
  meaning,
  min,
  max,
  prior,
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
    {
      // The geometric middle of 40-90 MB/s, with that range as one standard deviation.
      value: 60e6,
      logSd: Math.log(1.5),
      basis:
        "one registry or S3 connection delivers 40-90 MB/s (AWS S3 performance guidelines: one request per 85-90 MB/s; field notes' single-GET pulls)",
    },
  ),
  {
    name: "gzipInflateScale",
    meaning: "gzip inflate speed of one core, as a multiple of today's per-content rates",
    min: 0.5,
    max: 4,
    prior: {
      value: 1,
      logSd: Math.log(1.5),
      basis:
        "today's table is Go's compress/gzip measured on this project's 2-vCPU EPYC; other server cores of the same era are within ~1.5x",
    },
    // Today's rates are the unit: 1 means the production table.
    read: (physics) =>
      physics.decompressBytesPerSecondPerCore["gzip-6"].code /
      PHYSICS.decompressBytesPerSecondPerCore["gzip-6"].code,
    write: scaleGzip,
  },
  scalar("loaderSetupSeconds", "open weight files, parse headers, allocate (s)", 0.05, 5, {
    value: 0.3,
    logSd: Math.log(3),
    basis:
      "a few file opens, safetensors JSON headers and parameter allocation: tenths of a second, spread wide",
  }),
  scalar("pageableCopyFraction", "pageable host->GPU copy as a share of the pinned rate", 0.2, 1, {
    value: 0.5,
    logSd: Math.log(1.5),
    basis:
      "the driver stages pageable copies through a pinned bounce buffer, a second copy per byte (CUDA C++ Best Practices Guide, 'Pinned Memory'; NVIDIA's 'How to Optimize Data Transfers in CUDA C/C++')",
  }),
  scalar(
    "wakeCopyFraction",
    "a level-1 wake's copy of its pinned backup, as a share of the pinned rate",
    0.2,
    1,
    {
      value: 0.75,
      logSd: Math.log(1.5),
      basis:
        "vLLM pins its level-1 CPU backup and torch_memory_saver registers hugepages, so a wake is pinned DMA with a per-allocation cost: most of the pinned rate",
    },
  ),
  scalar("criuBaseSeconds", "CRIU process tree, namespaces, fds before pages (s)", 0.05, 5, {
    // 2.5 s - 0.3 s - 3.4 GB / (4 GB/s).
    value: 1.35,
    logSd: Math.log(2),
    basis:
      "the field notes' 2.5 s restore of a 3.4 GB sleep-level-2 image, less the CUDA toggle (0.3 s) and its pages at the page-restore prior (4 GB/s)",
  }),
  scalar(
    "criuPageRestoreBytesPerSecond",
    "CRIU page restore into the new address space (bytes/s)",
    0.3e9,
    30e9,
    {
      value: 4e9,
      logSd: Math.log(2),
      basis:
        "preadv of image pages into fresh anonymous memory: page faults plus one core's memcpy, as one buffered reader of cached bytes",
    },
  ),
  scalar(
    "cudaCheckpointRestoreBytesPerSecond",
    "device memory cuda-checkpoint puts back (bytes/s); at most a PCIe Gen5 x16 link",
    0.1e9,
    50e9,
    {
      value: 25e9,
      logSd: Math.log(3),
      basis:
        "a host-to-device copy of pinned memory: ~25 GB/s on PCIe Gen4 x16 (host-profiles.ts), spread wide for the driver's own work",
    },
  ),
  scalar("engineWakeSeconds", "re-allocate the KV cache, first forward pass (s)", 0.02, 5, {
    value: 0.2,
    logSd: Math.log(3),
    basis:
      "cudaMalloc of the KV cache and one forward pass through captured graphs: tens to hundreds of milliseconds",
  }),
  scalar(
    "deviceRemapBytesPerSecond",
    "device memory a waking engine maps back, per second (CUDA VMM create + map + set access)",
    5e9,
    500e9,
    {
      value: 60e9,
      logSd: Math.log(3),
      basis:
        "one driver call sequence per 2 MiB granule, tens of microseconds each: tens of GB/s, spread wide",
    },
  ),
  scalar(
    "pageCacheReaderBytesPerSecond",
    "one buffered reader copying cached file bytes: page faults and one core's memcpy (bytes/s)",
    1e9,
    20e9,
    {
      value: 4e9,
      logSd: Math.log(2),
      basis:
        "one core's memcpy (~10 GB/s) slowed by a page fault or copy_to_user per 4 KiB page: a few GB/s",
    },
  ),
  scalar(
    "pageCacheReadBytesPerSecond",
    "many readers of cached bytes together: a copy's share of memory bandwidth (bytes/s)",
    5e9,
    200e9,
    {
      value: 16e9,
      logSd: Math.log(3),
      basis:
        "several readers at a few GB/s each, below a server's 100-400 GB/s of DRAM bandwidth: tens of GB/s, spread wide",
    },
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

/** Pseudo-Huber loss: about x²/(2·scale) below `scale`, about |x| above it. */
function pseudoHuber(x: number, scale: number): number {
  return scale * (Math.sqrt(1 + (x / scale) ** 2) - 1);
}

/** Pseudo-Huber loss of one log error. */
const robustLoss = (logError: number) => pseudoHuber(logError, ROBUST_SCALE);

/**
 * The priors' share of the loss, on the cases' scale: a case's loss is about e²/(2·0.1) for
 * a small log error e (a likelihood of variance 0.1), so a prior's is z²/2 for z standard
 * deviations from its value (its lognormal density), growing only linearly beyond about one
 * standard deviation, so that a prior the data clearly contradict gives way. A constant that
 * several cases pin moves to fit them; one no case informs stays near its physics.
 */
function priorLoss(physics: Physics): number {
  return FITTED_PARAMETERS.reduce((sum, parameter) => {
    const deviations =
      Math.log(parameter.read(physics) / parameter.prior.value) / parameter.prior.logSd;
    return sum + pseudoHuber(deviations, 1);
  }, 0);
}

/**
 * What the fit minimises: the robust loss of the cases' log errors (log, so 2x too slow and
 * 2x too fast weigh the same; per phase where the source gives phases) plus the priors'
 * loss, averaged, and a steep price for any field-notes row pushed beyond ±10%.
 */
export function fitObjective(
  physics: Physics,
  cases: readonly FidelityCase[],
  anchors: readonly CalibrationRow[],
): number {
  const caseLoss = cases.reduce((sum, fidelityCase) => {
    const prediction = predictCase(fidelityCase, physics);
    // Where the source breaks its start into phases, each phase is matched (a case still
    // counts once): otherwise a fit could trade one phase's seconds against another's and
    // learn a constant from the wrong phase.
    const errors =
      prediction.phases.length > 0
        ? prediction.phases.map((phase) =>
            Math.log(phase.predictedSeconds / phase.publishedSeconds),
          )
        : [Math.log(prediction.predictedSeconds / prediction.publishedSeconds)];
    return sum + errors.reduce((total, error) => total + robustLoss(error), 0) / errors.length;
  }, priorLoss(physics));
  const allowed = Math.log(1 + ANCHOR_TOLERANCE);
  const anchorPenalty = anchors.reduce((sum, row) => {
    const modelled = comparedSeconds(row, simulateColdStart(row.scenario, {}, physics));
    return sum + Math.max(0, Math.abs(Math.log(modelled / row.targetSeconds)) - allowed);
  }, 0);
  return (
    caseLoss / Math.max(1, cases.length + FITTED_PARAMETERS.length) + ANCHOR_WEIGHT * anchorPenalty
  );
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

  // Moving one constant at a time stalls in a narrow diagonal valley: the field-notes
  // restore rows pin CRIU's base seconds plus its page time, so raising the page rate alone
  // breaks them and only a move of both stays inside. So every pair is tried together, in
  // both directions and with one moving half as far as the other (a valley bounded by an
  // anchor's ±10% edge curves in log space, so equal steps of both leave it).
  const DIAGONAL_STEPS = [Math.log(2), Math.log(1.25), Math.log(1.05)];
  const PAIR_MOVES: ReadonlyArray<readonly [number, number]> = [1, -1].flatMap((a) =>
    [1, -1].flatMap((b) => [[a, b] as const, [a, b / 2] as const, [a / 2, b] as const]),
  );
  const exploreDiagonals = (point: number[], pointScore: number, step: number) => {
    for (let i = 0; i < point.length; i++) {
      for (let j = i + 1; j < point.length; j++) {
        for (const [di, dj] of PAIR_MOVES) {
          const candidate = clamp(
            point.map((v, k) => (k === i ? v + di * step : k === j ? v + dj * step : v)),
          );
          if (candidate[i] === point[i] && candidate[j] === point[j]) continue;
          const candidateScore = score(candidate);
          if (candidateScore < pointScore - 1e-12)
            return { point: candidate, score: candidateScore };
        }
      }
    }
    return { point, score: pointScore };
  };

  const search = (start: number[], budget: number) => {
    const stopAt = evaluations + budget;
    let basePoint = clamp(start);
    let baseScore = score(basePoint);
    let step = Math.log(4);
    const smallestStep = Math.log(1.002);
    while (step >= smallestStep && evaluations < stopAt) {
      let moved = explore(basePoint, baseScore, step);
      if (moved.score >= baseScore && step / 2 < smallestStep) {
        // Converged along the axes: before stopping, look along the diagonals at a few
        // scales, and go on from any improvement with that step.
        for (const diagonalStep of DIAGONAL_STEPS) {
          moved = exploreDiagonals(basePoint, baseScore, diagonalStep);
          if (moved.score < baseScore) {
            step = diagonalStep;
            break;
          }
        }
      }
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

  // Three starts that know nothing of the cases: the physical priors, and a quarter and
  // three quarters of every physical range (log space). Starting from the production
  // constants instead would hand each leave-one-source-out fold what those constants learned
  // from the source it leaves out. The best end point wins.
  const starts = [
    FITTED_PARAMETERS.map((parameter) => Math.log(parameter.prior.value)),
    ...[0.25, 0.75].map((share) => bounds.map(([low, high]) => low + share * (high - low))),
  ];
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
