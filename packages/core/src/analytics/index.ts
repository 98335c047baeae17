// Read side of the dashboard: where every second of a cold start went. Pure figures
// (quantiles, mixes, prediction error, bottleneck hints) and the use cases that load them.
export type { ColdStartSample, PhaseSample } from "./cold-start-sample.ts";
export { phaseSecondsByStart, StartPhaseSeconds } from "./phase-seconds-by-start.ts";
export { phaseQuantilesByPath, PhaseQuantiles } from "./phase-quantiles-by-path.ts";
export { predictedVsActual, PredictedVsActual } from "./predicted-vs-actual.ts";
export { predictionErrorByPath, PredictionError } from "./prediction-error-by-path.ts";
export {
  BUCKET_WIDTHS_SECONDS,
  pathMixOverTime,
  PathMixBucket,
  PathMixOverTime,
} from "./path-mix-over-time.ts";
export {
  summarizeTimeToReady,
  TIME_TO_READY_WINDOW,
  TimeToReadySummary,
} from "./summarize-time-to-ready.ts";
export {
  bottleneckHints,
  EXPLAINED_SHARE,
  NAMED_BOUND_SHARE,
  BottleneckHint,
  type BottleneckInput,
  BoundKind,
  type HostCeilings,
} from "./bottleneck-hints.ts";
export { coldStartBreakdown, ColdStartBreakdown, PathBottlenecks } from "./cold-start-breakdown.ts";
export {
  DeploymentBreakdown,
  getDeploymentBreakdown,
  GetDeploymentBreakdownInput,
} from "./get-deployment-breakdown.ts";
export {
  EndpointDetail,
  getEndpointDetail,
  GetEndpointDetailInput,
} from "./get-endpoint-detail.ts";
export {
  loadColdStartSummaries,
  loadRecentClosedStarts,
  type RecentClosedStart,
} from "./load-cold-start-summaries.ts";
export { endpointStatus, EndpointStatus } from "./endpoint-status.ts";
export {
  CALIBRATION_STARTS,
  CALIBRATION_TARGET,
  predictionCalibration,
  type CalibrationStart,
  type PredictionCalibration,
} from "./prediction-calibration.ts";
export { loadPredictionCalibration } from "./load-prediction-calibration.ts";
