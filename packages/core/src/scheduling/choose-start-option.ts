import type { Objective } from "../vocabulary/index";
import type { TimeToReadyPrediction } from "./predict-time-to-ready";
import { describeOption, type InfeasibleOption, type StartOption } from "./start-option";

// The path choice of one replica (ARCHITECTURE.md §5): the option with the least expected
// time-to-ready (or p90, per endpoint), with bounded Thompson exploration so that options
// with little history get measured, and a record of why every other option lost.

export interface PredictedStartOption {
  option: StartOption;
  prediction: TimeToReadyPrediction;
}

export interface ExplorationSettings {
  /** Options with fewer deployment-level samples than this may be explored. */
  minSamples: number;
  /** At most this fraction of recent decisions may be explorations. */
  budgetFraction: number;
  /** Decisions and explorations in the recent window (the worker counts them). */
  recentDecisions: number;
  recentExplorations: number;
}

export const DEFAULT_EXPLORATION: Omit<
  ExplorationSettings,
  "recentDecisions" | "recentExplorations"
> = { minSamples: 5, budgetFraction: 0.1 };

/**
 * How many of the recent decisions are worth counting before `batchSize` more are made: at
 * this many the budget check (explorations + 1 ≤ fraction × (decisions + 1)) passes for every
 * decision of the batch whatever the true count, so a count may stop here — an org's last
 * hour can hold tens of thousands of starts, and reading them all per batch is what made
 * placement slow. (One more than the bound, against rounding in fraction × decisions.)
 * placement/place-replica.ts computes the same bound in its SQL, where the count is made:
 * change both together.
 */
export function recentDecisionsWorthCounting(
  recentExplorations: number,
  batchSize: number,
  budgetFraction: number = DEFAULT_EXPLORATION.budgetFraction,
): number {
  return Math.ceil((recentExplorations + batchSize + 1) / budgetFraction) + 1;
}

/**
 * Concurrent starts on one node share its NIC and disk. Each start in flight adds this
 * fraction of an option's own time: between no contention (0) and full serialisation (1).
 * A warm handover moves no bytes and is exempt, as is a level-1 wake (its bytes cross only
 * the host's own PCIe, from memory the sleeping engine holds).
 */
export const IN_FLIGHT_SLOWDOWN = 0.5;

export type LostBecause =
  | { kind: "slower"; bySeconds: number; text: string }
  | { kind: "warm-replica-available"; text: string }
  | { kind: "not-explored"; reason: "budget" | "scale-from-zero"; text: string }
  | { kind: "exploration-chosen"; text: string }
  | { kind: "infeasible"; reason: string; text: string };

export interface ScoredStartOption extends PredictedStartOption {
  /** Objective seconds including the queueing penalty: what the choice minimises. */
  costSeconds: number;
  chosen: boolean;
  lostBecause: LostBecause | null;
}

export interface StartOptionChoice {
  chosen: ScoredStartOption | null;
  explored: boolean;
  /** Every feasible option, best first, with its prediction and why it lost. */
  options: ScoredStartOption[];
  /** Shared between the choices of one batch: read it, never change it. */
  infeasible: readonly (InfeasibleOption & { lostBecause: LostBecause })[];
  explanation: string;
}

/** Standard normal from a uniform RNG (Box–Muller); the RNG is injected so replays are exact. */
function standardNormal(random: () => number): number {
  const u1 = Math.max(random(), Number.MIN_VALUE);
  const u2 = random();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

function queueFactor(
  option: Pick<StartOption, "path" | "startsInFlight" | "sleepingReplica">,
): number {
  const movesNoSharedBytes =
    option.path === "warm" || (option.path === "wake" && option.sleepingReplica?.sleepLevel === 1);
  return movesNoSharedBytes ? 1 : 1 + IN_FLIGHT_SLOWDOWN * Math.max(0, option.startsInFlight);
}

function objectiveSeconds(prediction: TimeToReadyPrediction, objective: Objective): number {
  return objective === "p90" ? prediction.p90Seconds : prediction.meanSeconds;
}

/** Same shape of the lognormal, mean shifted to a draw of μ: a Thompson sample in seconds. */
function sampledObjectiveSeconds(
  prediction: TimeToReadyPrediction,
  objective: Objective,
  random: () => number,
): number {
  const drawnMeanLog =
    prediction.meanLog + Math.sqrt(prediction.meanLogVariance) * standardNormal(random);
  return objectiveSeconds(prediction, objective) * Math.exp(drawnMeanLog - prediction.meanLog);
}

/** What the choice minimises for one option: objective seconds times the queueing penalty. */
export function optionCostSeconds(predicted: PredictedStartOption, objective: Objective): number {
  return objectiveSeconds(predicted.prediction, objective) * queueFactor(predicted.option);
}

const PATH_ORDER = { warm: 0, wake: 1, restore: 2, peer: 3, lazy: 4, pull: 5 } as const;

/**
 * The order of `options` in a choice: least cost first, then by path, then by node id. Options
 * that compare equal keep their input order (the sort is stable); input already in this order
 * is sorted in one pass.
 */
export function byCost(
  a: Pick<ScoredStartOption, "costSeconds" | "option">,
  b: Pick<ScoredStartOption, "costSeconds" | "option">,
): number {
  return (
    a.costSeconds - b.costSeconds ||
    PATH_ORDER[a.option.path] - PATH_ORDER[b.option.path] ||
    a.option.nodeId.localeCompare(b.option.nodeId)
  );
}

const seconds = (value: number) => (value < 10 ? value.toFixed(1) : value.toFixed(0));

function summary(scored: ScoredStartOption, label = ""): string {
  return `${describeOption(scored.option)}: ${seconds(scored.costSeconds)} s${label} (${scored.prediction.samples} samples)`;
}

type InfeasibleWithReason = InfeasibleOption & { lostBecause: LostBecause };

const withReason = new WeakMap<InfeasibleOption, InfeasibleWithReason>();

/**
 * The infeasible options with why each lost. A place job's batch passes the same entries for
 * each of its replicas (a hundred and more on a large fleet; only the node a decision took
 * from changes), so each entry is built once and shared by their choices: neither the
 * entries nor what is built from them change afterwards.
 */
function withInfeasibleReasons(
  entries: readonly InfeasibleOption[],
): readonly InfeasibleWithReason[] {
  return entries.map((entry) => {
    let built = withReason.get(entry);
    if (!built) {
      built = {
        ...entry,
        lostBecause: {
          kind: "infeasible" as const,
          reason: entry.reason,
          text: `infeasible: ${entry.reason}`,
        },
      };
      withReason.set(entry, built);
    }
    return built;
  });
}

export function chooseStartOption(input: {
  options: readonly PredictedStartOption[];
  infeasible?: readonly InfeasibleOption[];
  objective: Objective;
  /** A scale-from-zero with requests waiting: latency-critical, never explored. */
  scaleFromZeroWithWaitingRequests: boolean;
  exploration: ExplorationSettings;
  /** Uniform [0, 1); seeded by the caller. */
  random: () => number;
}): StartOptionChoice {
  const { objective, exploration, random } = input;
  const infeasible = input.infeasible ? withInfeasibleReasons(input.infeasible) : [];
  // Built field by field, not spread: spreading measured 50× slower here, and this runs for
  // every option of every decision (hundreds per replica on a large fleet).
  const scored: ScoredStartOption[] = input.options
    .map((predicted): ScoredStartOption => ({
      option: predicted.option,
      prediction: predicted.prediction,
      costSeconds:
        objectiveSeconds(predicted.prediction, objective) * queueFactor(predicted.option),
      chosen: false,
      lostBecause: null,
    }))
    .sort(byCost);

  if (scored.length === 0) {
    return {
      chosen: null,
      explored: false,
      options: [],
      infeasible,
      explanation: `no feasible option (${infeasible.length} infeasible): provision a node or wait`,
    };
  }

  // An idle warm replica already holds the GPUs and every byte; any other path reserves more
  // GPUs and leaves that replica idle. So a warm handover wins whatever the predictions say,
  // and is never explored away from.
  const warm = scored.filter((s) => s.option.path === "warm");
  const incumbent = warm[0] ?? scored[0]!;

  let challenger: ScoredStartOption | null = null;
  let blockedBy: "budget" | "scale-from-zero" | null = null;
  if (incumbent.option.path !== "warm") {
    // Thompson: one draw from each posterior; the best draw is the challenger. It is tried
    // only if it is under-sampled and its draw beats the incumbent's expected cost.
    // (One draw per option, in order, the first of equal draws kept: a loop, not a list of
    // draws, as this runs for every option of every decision.)
    let best = { scored: scored[0]!, draw: Infinity };
    for (let i = 0; i < scored.length; i++) {
      const s = scored[i]!;
      const draw = sampledObjectiveSeconds(s.prediction, objective, random) * queueFactor(s.option);
      if (i === 0 || draw < best.draw) best = { scored: s, draw };
    }
    if (
      best.scored !== incumbent &&
      best.scored.prediction.samples < exploration.minSamples &&
      best.draw < incumbent.costSeconds
    ) {
      const withinBudget =
        exploration.recentExplorations + 1 <=
        exploration.budgetFraction * (exploration.recentDecisions + 1);
      if (input.scaleFromZeroWithWaitingRequests) blockedBy = "scale-from-zero";
      else if (!withinBudget) blockedBy = "budget";
      else challenger = best.scored;
      if (blockedBy) {
        best.scored.lostBecause = {
          kind: "not-explored",
          reason: blockedBy,
          text: `not explored: ${blockedBy === "budget" ? "exploration budget spent" : "scale-from-zero with requests waiting"} (slower by ${seconds(best.scored.costSeconds - incumbent.costSeconds)} s)`,
        };
      }
    }
  }

  const chosen = challenger ?? incumbent;
  chosen.chosen = true;
  // Options of equal cost sit side by side (scored is sorted) and share their text.
  let slowerText = { bySeconds: NaN, text: "" };
  for (const s of scored) {
    if (s === chosen || s.lostBecause) continue;
    if (chosen.option.path === "warm" && s.option.path !== "warm") {
      s.lostBecause = {
        kind: "warm-replica-available",
        text: `a warm replica was available (${describeOption(chosen.option)})`,
      };
    } else if (challenger && s === incumbent) {
      s.lostBecause = {
        kind: "exploration-chosen",
        text: `exploring ${describeOption(challenger.option)} instead (${challenger.prediction.samples} samples)`,
      };
    } else {
      const bySeconds = Math.max(0, s.costSeconds - chosen.costSeconds);
      if (bySeconds !== slowerText.bySeconds)
        slowerText = { bySeconds, text: `slower by ${seconds(bySeconds)} s` };
      s.lostBecause = { kind: "slower", bySeconds, text: slowerText.text };
    }
  }

  const others = scored
    .filter((s) => s !== chosen)
    .slice(0, 3)
    .map((s) => summary(s));
  const head = challenger
    ? `exploring ${summary(challenger)}: an optimistic draw beats ${summary(incumbent)}`
    : summary(chosen, objective === "p90" ? " p90 predicted" : " predicted");
  const tail = [
    others.length > 0 && !challenger ? `vs ${others.join(", ")}` : null,
    blockedBy
      ? `not explored: ${blockedBy === "budget" ? "budget spent" : "scale-from-zero with requests waiting"}`
      : null,
    infeasible.length > 0 ? `${infeasible.length} infeasible` : null,
  ].filter((part): part is string => part !== null);

  return {
    chosen,
    explored: challenger !== null,
    options: scored,
    infeasible,
    explanation: [head, ...tail].join("; "),
  };
}
