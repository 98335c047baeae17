import { z } from "zod";
import { ColdStartStatus, Phase, StartPath } from "../vocabulary/index.ts";
import type { ColdStartSample } from "./cold-start-sample.ts";

export const StartPhaseSeconds = z.object({
  id: z.string(),
  requestedAt: z.date(),
  path: StartPath,
  status: ColdStartStatus,
  /** Seconds per measured phase (a phase reported twice is summed); absent phases are 0. */
  seconds: z.record(Phase, z.number()),
  /** Sum of the measured phases. */
  totalSeconds: z.number(),
});
export type StartPhaseSeconds = z.infer<typeof StartPhaseSeconds>;

const PHASES = Phase.options;

/** Per start, oldest first, the seconds of each phase: the stacked bars of the breakdown. */
export function phaseSecondsByStart(starts: readonly ColdStartSample[]): StartPhaseSeconds[] {
  return [...starts]
    .sort((a, b) => a.requestedAt.getTime() - b.requestedAt.getTime())
    .map((start) => {
      const seconds = Object.fromEntries(PHASES.map((p) => [p, 0])) as Record<Phase, number>;
      for (const phase of start.phases) seconds[phase.phase] += phase.seconds ?? 0;
      return {
        id: start.id,
        requestedAt: start.requestedAt,
        path: start.path,
        status: start.status,
        seconds,
        totalSeconds: PHASES.reduce((sum, p) => sum + seconds[p], 0),
      };
    });
}
