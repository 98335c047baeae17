import type { StartPath } from "../vocabulary/index";
import type { Locality } from "./start-option";

// One history cell (the HistoryStat row): observed time-to-ready of one (scope, path,
// locality), summarised in log space. Log space because start times are multiplicative
// (a slow disk slows every byte) and right-skewed; a lognormal fits, and Welford's running
// mean / M2 keep the cell O(1) whatever the number of starts.

export type HistoryScope = "deployment" | "endpoint" | "fleet";

export interface HistoryCell {
  samples: number;
  /** Mean of ln(seconds). */
  meanLog: number;
  /** Sum of squared deviations of ln(seconds) from the mean (Welford's M2). */
  m2Log: number;
  /** Mean absolute log-error of the predictions made for this cell (0 before any). */
  predictionErrorLog: number;
}

export const EMPTY_HISTORY_CELL: HistoryCell = {
  samples: 0,
  meanLog: 0,
  m2Log: 0,
  predictionErrorLog: 0,
};

/**
 * Durations below this are clamped: ln(0) is -Infinity, and a 0 s start is a measurement
 * artefact (a marker phase), not a real start.
 */
export const MIN_OBSERVED_SECONDS = 0.01;

/**
 * The cell after one more observed start (Welford):
 *   n' = n + 1;  d = x - mean;  mean' = mean + d / n';  M2' = M2 + d · (x - mean')
 * with x = ln(seconds). When the start had a prediction, the cell's mean absolute log-error
 * is advanced the same way, so "prediction error by path" is a running figure.
 */
export function updateHistoryStat(
  cell: HistoryCell,
  observedSeconds: number,
  predictedSeconds?: number,
): HistoryCell {
  const x = Math.log(Math.max(MIN_OBSERVED_SECONDS, observedSeconds));
  const samples = cell.samples + 1;
  const delta = x - cell.meanLog;
  const meanLog = cell.meanLog + delta / samples;
  const m2Log = cell.m2Log + delta * (x - meanLog);
  const predictionErrorLog =
    predictedSeconds === undefined
      ? cell.predictionErrorLog
      : cell.predictionErrorLog +
        (Math.abs(predictionLogError(predictedSeconds, observedSeconds)) -
          cell.predictionErrorLog) /
          samples;
  return { samples, meanLog, m2Log, predictionErrorLog };
}

/**
 * ln(actual / predicted): 0 is perfect, +0.69 means the start took twice as long as
 * predicted, -0.69 half. Symmetric in ratio, which a difference in seconds is not.
 */
export function predictionLogError(predictedSeconds: number, actualSeconds: number): number {
  return (
    Math.log(Math.max(MIN_OBSERVED_SECONDS, actualSeconds)) -
    Math.log(Math.max(MIN_OBSERVED_SECONDS, predictedSeconds))
  );
}

/** Sample variance of ln(seconds); 0 with fewer than two samples. */
export function historyCellVariance(cell: HistoryCell): number {
  return cell.samples > 1 ? cell.m2Log / (cell.samples - 1) : 0;
}

const GB = 1_000_000_000;
/** Upper bounds of the fleet-level model-size buckets; models of like size start alike. */
const MODEL_SIZE_BUCKETS_GB = [2, 8, 32, 128] as const;

/** The fleet-level bucket of a model size: "le-2GB", "le-8GB", …, "gt-128GB". */
export function modelSizeBucket(modelBytes: number): string {
  const bound = MODEL_SIZE_BUCKETS_GB.find((gb) => modelBytes <= gb * GB);
  return bound === undefined ? `gt-${MODEL_SIZE_BUCKETS_GB.at(-1)}GB` : `le-${bound}GB`;
}

export interface HistoryCellKey {
  scope: HistoryScope;
  scopeKey: string;
  path: StartPath;
  locality: Locality;
}

/**
 * The three cells one observed start updates, finest first (the HistoryStat unique key
 * without the org): the deployment's, the endpoint's, and the fleet's model-size bucket.
 */
export function historyCellKeys(start: {
  deploymentId: string;
  endpointId: string;
  modelBytes: number;
  path: StartPath;
  locality: Locality;
}): [HistoryCellKey, HistoryCellKey, HistoryCellKey] {
  const { path, locality } = start;
  return [
    { scope: "deployment", scopeKey: start.deploymentId, path, locality },
    { scope: "endpoint", scopeKey: start.endpointId, path, locality },
    { scope: "fleet", scopeKey: modelSizeBucket(start.modelBytes), path, locality },
  ];
}
