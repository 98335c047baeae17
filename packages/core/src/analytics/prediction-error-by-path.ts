import { z } from "zod";
import { StartPath } from "../vocabulary/index.ts";
import type { ColdStartSample } from "./cold-start-sample.ts";
import { predictedVsActual } from "./predicted-vs-actual.ts";
import { quantile } from "../statistics/index.ts";

export const PredictionError = z.object({
  path: StartPath,
  samples: z.number(),
  /** Mean |actual − predicted|. */
  meanAbsoluteErrorSeconds: z.number(),
  /** Mean actual − predicted: positive when the predictor is optimistic. */
  biasSeconds: z.number(),
  /** Median |actual − predicted| / actual. */
  medianAbsolutePercentError: z.number(),
  /**
   * Mean |ln actual − ln predicted|: the predictor works in log space, so this is the
   * figure its history cells record (HistoryStat.predictionErrorLog).
   */
  meanAbsoluteLogError: z.number(),
});
export type PredictionError = z.infer<typeof PredictionError>;

/** How far predictions missed, per start path, over succeeded starts (ARCHITECTURE.md §5). */
export function predictionErrorByPath(starts: readonly ColdStartSample[]): PredictionError[] {
  const points = predictedVsActual(starts);
  const rows: PredictionError[] = [];
  for (const path of StartPath.options) {
    const mine = points.filter((p) => p.path === path);
    if (mine.length === 0) continue;
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const logError = mine
      .filter((p) => p.actualSeconds > 0 && p.predictedSeconds > 0)
      .map((p) => Math.abs(Math.log(p.actualSeconds) - Math.log(p.predictedSeconds)));
    const percent = mine
      .filter((p) => p.actualSeconds > 0)
      .map((p) => Math.abs(p.errorSeconds) / p.actualSeconds);
    rows.push({
      path,
      samples: mine.length,
      meanAbsoluteErrorSeconds: mean(mine.map((p) => Math.abs(p.errorSeconds))),
      biasSeconds: mean(mine.map((p) => p.errorSeconds)),
      medianAbsolutePercentError: quantile(percent, 0.5) ?? 0,
      meanAbsoluteLogError: logError.length > 0 ? mean(logError) : 0,
    });
  }
  return rows;
}
