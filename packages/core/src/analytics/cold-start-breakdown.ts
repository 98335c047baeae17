import { z } from "zod";
import { StartPath } from "../vocabulary/index.ts";
import { BottleneckHint, bottleneckHints } from "./bottleneck-hints.ts";
import type { ColdStartSample } from "./cold-start-sample.ts";
import { PathMixOverTime, pathMixOverTime } from "./path-mix-over-time.ts";
import { PhaseQuantiles, phaseQuantilesByPath } from "./phase-quantiles-by-path.ts";
import { phaseSecondsByStart, StartPhaseSeconds } from "./phase-seconds-by-start.ts";
import { PredictedVsActual, predictedVsActual } from "./predicted-vs-actual.ts";
import { PredictionError, predictionErrorByPath } from "./prediction-error-by-path.ts";
import { summarizeTimeToReady, TimeToReadySummary } from "./summarize-time-to-ready.ts";

export const PathBottlenecks = z.object({
  path: StartPath,
  /** The latest succeeded start of this path: the one the hints read. */
  coldStartId: z.string(),
  requestedAt: z.date(),
  hints: z.array(BottleneckHint),
});
export type PathBottlenecks = z.infer<typeof PathBottlenecks>;

/** Every figure of one deployment's cold starts (coldStartBreakdown). */
export const ColdStartBreakdown = z.object({
  summary: TimeToReadySummary,
  starts: z.array(StartPhaseSeconds),
  phaseQuantiles: z.array(PhaseQuantiles),
  predictedVsActual: z.array(PredictedVsActual),
  pathMix: PathMixOverTime,
  predictionError: z.array(PredictionError),
  bottlenecks: z.array(PathBottlenecks),
});
export type ColdStartBreakdown = z.infer<typeof ColdStartBreakdown>;

/**
 * Where every second of one deployment's cold starts went: the phases of each start (stacked
 * bars), p50 / p95 per phase per path, predicted vs actual, the path mix over time, the
 * prediction error by path, the headline figures, and what bounds the latest start of each
 * path on its host.
 */
export function coldStartBreakdown(
  starts: readonly ColdStartSample[],
  deployment: { imageLayers: unknown; engineProfile: unknown },
): ColdStartBreakdown {
  return {
    summary: summarizeTimeToReady(starts),
    starts: phaseSecondsByStart(starts),
    phaseQuantiles: phaseQuantilesByPath(starts),
    predictedVsActual: predictedVsActual(starts),
    pathMix: pathMixOverTime(starts),
    predictionError: predictionErrorByPath(starts),
    bottlenecks: latestBottlenecksByPath(starts, deployment),
  };
}

function latestBottlenecksByPath(
  starts: readonly ColdStartSample[],
  deployment: { imageLayers: unknown; engineProfile: unknown },
): PathBottlenecks[] {
  const rows: PathBottlenecks[] = [];
  for (const path of StartPath.options) {
    const latest = starts
      .filter((s) => s.path === path && s.status === "succeeded")
      .reduce<ColdStartSample | null>(
        (a, b) => (a === null || b.requestedAt.getTime() > a.requestedAt.getTime() ? b : a),
        null,
      );
    if (!latest) continue;
    rows.push({
      path,
      coldStartId: latest.id,
      requestedAt: latest.requestedAt,
      hints: bottleneckHints({
        path,
        phases: latest.phases,
        host: latest.host ?? null,
        imageLayers: deployment.imageLayers,
        engineProfile: deployment.engineProfile,
      }),
    });
  }
  return rows;
}
