export {
  actualSecondsOf,
  MAX_PHASE_SECONDS,
  measurePhase,
  nextColdStart,
  nextReplicaState,
  TERMINAL_COLD_START_STATUSES,
} from "./cold-start-transitions.ts";
export {
  ingestTelemetry,
  ingestTelemetryGroup,
  type IngestTelemetryResult,
  type TelemetryOutcome,
  type TelemetrySubmission,
  type TelemetryInput,
} from "./ingest-telemetry.ts";
