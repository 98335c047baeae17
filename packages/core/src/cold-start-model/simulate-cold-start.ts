import { hostRates } from "./engine-phases";
import {
  fetchKernelCacheTiming,
  fetchesStoredKernelCache,
  withKernelCacheFetch,
} from "./kernel-cache";
import { planImage } from "./image-reads";
import { lazyPhases } from "./lazy-path";
import { PHYSICS, type Physics } from "./physical-constants";
import { pullPhases } from "./pull-path";
import { restorePhases } from "./restore-path";
import { peerPhases } from "./peer-path";
import { wakePhases } from "./wake-path";
import {
  parseColdStartScenario,
  type ColdStartScenario,
  type ColdStartResult,
  type ColdStartScenarioInput,
  type PhaseTiming,
} from "./scenario-schema";
import { clampedStandardNormal, deriveSeed, mulberry32 } from "./seeded-random";

/** Failures to inject, independent of the scenario (a host's bad day, not its figures). */
export interface FailureInjection {
  /** Chance that CRIU restore / cuda-checkpoint fails (path `restore`). */
  restoreFailureProbability?: number;
  /** Chance that fetching the image stops making progress (the `pull` or `prefetch` phase). */
  pullStallProbability?: number;
}

const NOISE_STREAM = 0;
const FAILURE_STREAM = 1;

/**
 * One cold start of a scenario, phase by phase (ARCHITECTURE.md §4 order), in seconds. Pure and
 * deterministic for a seed: the `sim` runtime replays it, the predictor uses it as its prior.
 * `queue` and `provision` are control-plane phases and are not modelled here.
 */
export function simulateColdStart(
  input: ColdStartScenarioInput,
  failures: FailureInjection = {},
  physics: Physics = PHYSICS,
): ColdStartResult {
  const scenario = parseColdStartScenario(input);
  const withNoise = scenario.noise
    ? applyNoise(basePhases(scenario, physics), scenario.seed, physics)
    : basePhases(scenario, physics);
  const failure = injectFailure(withNoise, scenario, failures, physics);
  const phases = (
    failure ? failure.phases : [...withNoise, { phase: "ready" as const, seconds: 0, bytes: 0 }]
  ).map((timing) => ({ ...timing, seconds: roundSeconds(timing.seconds) }));
  const totalSeconds = roundSeconds(phases.reduce((sum, timing) => sum + timing.seconds, 0));
  return failure
    ? { path: scenario.path, phases, totalSeconds, failure: failure.failure }
    : { path: scenario.path, phases, totalSeconds };
}

/**
 * A scenario's phases without noise, for callers that simulate the same start many times
 * with different seeds (bench:replay): pass them to `noisyTotalSeconds` with each seed and
 * get exactly what simulateColdStart's totalSeconds would be, without parsing and
 * re-deriving the physics every time.
 */
export function noiselessPhases(
  input: ColdStartScenarioInput,
  physics: Physics = PHYSICS,
): PhaseTiming[] {
  return basePhases(parseColdStartScenario(input), physics);
}

/**
 * simulateColdStart's total for these noiseless phases under `seed` (noise on, no failure
 * injection), leaving out the phases `skip` names (e.g. a pull whose image is cached).
 */
export function noisyTotalSeconds(
  phases: readonly PhaseTiming[],
  seed: number,
  skip: ReadonlySet<PhaseTiming["phase"]> = new Set(),
  physics: Physics = PHYSICS,
): number {
  let total = 0;
  for (const timing of applyNoise([...phases], seed, physics))
    if (!skip.has(timing.phase)) total += roundSeconds(timing.seconds);
  return roundSeconds(total);
}

function basePhases(scenario: ColdStartScenario, physics: Physics): PhaseTiming[] {
  if (!fetchesStoredKernelCache(scenario)) return pathPhases(scenario, physics);
  // The stored cache is fetched before compile, which then runs warm.
  const warm = { ...scenario, engine: { ...scenario.engine, warmCaches: true } };
  return withKernelCacheFetch(
    pathPhases(warm, physics),
    fetchKernelCacheTiming(scenario, hostRates(scenario.host, physics), physics),
  );
}

function pathPhases(scenario: ColdStartScenario, physics: Physics): PhaseTiming[] {
  const rates = hostRates(scenario.host, physics);
  switch (scenario.path) {
    case "warm":
      return [{ phase: "handover", seconds: physics.handoverSeconds, bytes: 0 }];
    case "wake":
      return wakePhases(scenario, rates, physics);
    case "restore":
      return restorePhases(scenario, rates, physics);
    case "peer":
      return peerPhases(scenario, rates, physics);
    case "lazy":
      return lazyPhases(
        scenario,
        planImage(scenario.image, scenario.engine, physics),
        rates,
        physics,
      );
    case "pull":
      return pullPhases(
        scenario,
        planImage(scenario.image, scenario.engine, physics),
        rates,
        physics,
      );
  }
}

/** Multiplicative lognormal noise per phase, one draw per phase in order, clamped. */
function applyNoise(phases: PhaseTiming[], seed: number, physics: Physics): PhaseTiming[] {
  const random = mulberry32(deriveSeed(seed, NOISE_STREAM));
  return phases.map((timing) => {
    const sigma = physics.noiseSigmaByPhase[timing.phase];
    const factor = Math.exp(sigma * clampedStandardNormal(random, physics.noiseClampSigmas));
    return { ...timing, seconds: timing.seconds * factor };
  });
}

interface InjectedFailure {
  phases: PhaseTiming[];
  failure: NonNullable<ColdStartResult["failure"]>;
}

function injectFailure(
  phases: PhaseTiming[],
  scenario: ColdStartScenario,
  failures: FailureInjection,
  physics: Physics,
): InjectedFailure | undefined {
  const random = mulberry32(deriveSeed(scenario.seed, FAILURE_STREAM));
  const stallDraw = random();
  const stallProgress = random();
  const restoreDraw = random();
  const failAt = (
    phase: PhaseTiming["phase"],
    seconds: (timing: PhaseTiming) => number,
    message: string,
  ) => {
    const index = phases.findIndex((timing) => timing.phase === phase);
    if (index < 0) return undefined;
    const failed = phases[index]!;
    return {
      phases: [...phases.slice(0, index), { ...failed, seconds: seconds(failed) }],
      failure: { phase, message },
    };
  };
  if (stallDraw < (failures.pullStallProbability ?? 0)) {
    const phase = scenario.path === "lazy" ? "prefetch" : "pull";
    const stalled = failAt(
      phase,
      (timing) => timing.seconds * stallProgress + physics.pullStallSeconds,
      `image fetch stalled: no progress for ${physics.pullStallSeconds} s, cancelled (containerd image_pull_progress_timeout)`,
    );
    if (stalled) return stalled;
  }
  if (restoreDraw < (failures.restoreFailureProbability ?? 0)) {
    return failAt(
      "restore",
      (timing) => timing.seconds,
      "criu restore failed: the snapshot did not come back (cuda-checkpoint toggle or page restore error)",
    );
  }
  return undefined;
}

function roundSeconds(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
