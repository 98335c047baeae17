import { formatSeconds } from "./format.ts";

/** What a cold start's prediction was, as its row stores it. */
export interface StoredPrediction {
  /** The objective's figure (the mean, or the p90 for a p90 endpoint). */
  predictedSeconds: number;
  predictedMeanSeconds: number | null;
  predictedP10Seconds: number | null;
  predictedP90Seconds: number | null;
}

/**
 * The predicted mean with its p10–p90 interval. Not the objective's figure: a p90 endpoint's
 * p90 beside the actual time read as a 2× error. Starts placed before the interval was kept
 * show that figure alone.
 */
export function PredictedSeconds({ start }: { start: StoredPrediction }) {
  const { predictedMeanSeconds: mean, predictedP10Seconds: p10, predictedP90Seconds: p90 } = start;
  if (mean === null || p10 === null || p90 === null)
    return <span data-testid="predicted">{formatSeconds(start.predictedSeconds)}</span>;
  return (
    <span
      data-testid="predicted"
      title="Predicted mean; in brackets the p10–p90 interval the start was predicted to finish in 80% of the time"
    >
      {formatSeconds(mean)}{" "}
      <span className="muted small nowrap" data-testid="predicted-interval">
        ({formatSeconds(p10)}–{formatSeconds(p90)})
      </span>
    </span>
  );
}
