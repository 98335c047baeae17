import type { Phase } from "../../vocabulary/index";
import { PHYSICS, type Physics } from "../physical-constants";
import type { ColdStartResult } from "../scenario-schema";
import { simulateColdStart } from "../simulate-cold-start";
import type { ComparedPhases, FidelityCase } from "./fidelity-case";

export interface PhaseComparison {
  phase: Phase;
  publishedSeconds: number;
  predictedSeconds: number;
  relativeError: number;
}

export interface CasePrediction {
  id: string;
  source: string;
  publishedSeconds: number;
  predictedSeconds: number;
  /** (predicted − published) / published: 0.1 = 10% too slow, −0.1 = 10% too fast. */
  relativeError: number;
  /** Only for the phases the source breaks out. */
  phases: PhaseComparison[];
}

/** (predicted − published) / published. */
export function relativeError(predictedSeconds: number, publishedSeconds: number): number {
  return (predictedSeconds - publishedSeconds) / publishedSeconds;
}

/** The seconds of a modelled start that `compare` names. */
export function comparedSecondsOf(result: ColdStartResult, compare: ComparedPhases): number {
  if (compare === "total") return result.totalSeconds;
  return result.phases
    .filter((timing) => compare.includes(timing.phase))
    .reduce((sum, timing) => sum + timing.seconds, 0);
}

/** The model's prediction of one case under `physics` (today's constants by default). */
export function predictCase(
  fidelityCase: FidelityCase,
  physics: Physics = PHYSICS,
): CasePrediction {
  const result = simulateColdStart(fidelityCase.scenario, {}, physics);
  const predictedSeconds = comparedSecondsOf(result, fidelityCase.compare);
  const phases = Object.entries(fidelityCase.publishedPhases ?? {}).map(
    ([name, publishedSeconds]) => {
      // The schema's keys are phases; Object.entries widens them to string.
      const phase = name as Phase;
      const predicted = comparedSecondsOf(result, [phase]);
      return {
        phase,
        publishedSeconds,
        predictedSeconds: predicted,
        relativeError: relativeError(predicted, publishedSeconds),
      };
    },
  );
  return {
    id: fidelityCase.id,
    source: fidelityCase.source.name,
    publishedSeconds: fidelityCase.publishedSeconds,
    predictedSeconds,
    relativeError: relativeError(predictedSeconds, fidelityCase.publishedSeconds),
    phases,
  };
}
