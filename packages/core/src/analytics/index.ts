// Read side of the dashboard: where every second of a cold start went. Pure figures
// (quantiles, mixes, prediction error, bottleneck hints) and the use cases that load them.
export type { ColdStartSample, PhaseSample } from "./cold-start-sample.ts";
export { phaseSecondsByStart, type StartPhaseSeconds } from "./phase-seconds-by-start.ts";
export { phaseQuantilesByPath, type PhaseQuantiles } from "./phase-quantiles-by-path.ts";
export { predictedVsActual, type PredictedVsActual } from "./predicted-vs-actual.ts";
export { predictionErrorByPath, type PredictionError } from "./prediction-error-by-path.ts";
export {
  BUCKET_WIDTHS_SECONDS,
  pathMixOverTime,
  type PathMixBucket,
  type PathMixOverTime,
} from "./path-mix-over-time.ts";
export {
  summarizeTimeToReady,
  TIME_TO_READY_WINDOW,
  type TimeToReadySummary,
} from "./summarize-time-to-ready.ts";
export {
  bottleneckHints,
  EXPLAINED_SHARE,
  NAMED_BOUND_SHARE,
  type BottleneckHint,
  type BottleneckInput,
  type BoundKind,
  type HostCeilings,
} from "./bottleneck-hints.ts";
export {
  coldStartBreakdown,
  type ColdStartBreakdown,
  type PathBottlenecks,
} from "./cold-start-breakdown.ts";
export { getDeploymentBreakdown, GetDeploymentBreakdownInput } from "./get-deployment-breakdown.ts";
export { getEndpointDetail, GetEndpointDetailInput } from "./get-endpoint-detail.ts";
export {
  loadColdStartSummaries,
  loadRecentClosedStarts,
  type RecentClosedStart,
} from "./load-cold-start-summaries.ts";
export { endpointStatus, type EndpointStatus } from "./endpoint-status.ts";
export {
  CALIBRATION_STARTS,
  CALIBRATION_TARGET,
  predictionCalibration,
  type CalibrationStart,
  type PredictionCalibration,
} from "./prediction-calibration.ts";
export { loadPredictionCalibration } from "./load-prediction-calibration.ts";
