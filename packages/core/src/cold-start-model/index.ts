// The cold-start physics model: one scenario in, phases out. Shared by the `sim` runtime
// (it replays the phases) and the scheduler's predictor (its prior). Pure, no I/O.
export {
  ColdStartResult,
  ColdStartScenario,
  LayerCompression,
  LayerContent,
  PhaseTiming,
  ScenarioEngine,
  ScenarioHost,
  ScenarioImage,
  ScenarioLayer,
  ScenarioLazy,
  ScenarioRestore,
  parseColdStartScenario,
  type ColdStartScenarioInput,
} from "./scenario-schema";
export {
  noiselessPhases,
  noisyTotalSeconds,
  simulateColdStart,
  type FailureInjection,
} from "./simulate-cold-start";
export {
  HOST_PROFILES,
  scenarioHostFromProfile,
  type DiskProfile,
  type HostProfile,
  type HostProfileName,
} from "./host-profiles";
export { PHYSICS, type Physics } from "./physical-constants";
export { mulberry32 } from "./seeded-random";
export {
  CALIBRATION_ROWS,
  GPT_OSS_JOURNEY,
  RUNAI_STREAMER,
  VLLM_ENGINE,
  comparedSeconds,
  type CalibrationRow,
} from "./calibration-scenarios";
export {
  FIDELITY_CASES_DIRECTORY,
  FidelityCase,
  collectFidelityCases,
  parseFidelityCaseFile,
} from "./fidelity/fidelity-case";
export {
  comparedSecondsOf,
  predictCase,
  relativeError,
  type CasePrediction,
  type PhaseComparison,
} from "./fidelity/predict-case";
export {
  FITTED_PARAMETERS,
  currentParameterValues,
  fitObjective,
  fitPhysics,
  physicsWith,
  type FittedParameter,
  type PhysicsFit,
  type PhysicsOverrides,
} from "./fidelity/fit-physics";
export {
  TARGETS as FIDELITY_TARGETS,
  evaluateFidelity,
  fidelityReportJson,
  summarizeErrors,
  type CaseVerdict,
  type FidelityReport,
} from "./fidelity/evaluate-fidelity";
