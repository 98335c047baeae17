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
  ScenarioKernelCache,
  ScenarioLayer,
  ScenarioLazy,
  ScenarioPeer,
  ScenarioRestore,
  ScenarioWake,
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
export { peerLinkBytesPerSecond, peerMountsEstargz } from "./peer-path";
export {
  WEIGHT_STAGING_READERS,
  restoreWeightsFromPeerPays,
  weightsStagingPays,
} from "./restore-path";
export { compilesOnStart, fetchesStoredKernelCache } from "./kernel-cache";
export { mulberry32 } from "./seeded-random";
export {
  CALIBRATION_ROWS,
  GPT_OSS_JOURNEY,
  RUNAI_STREAMER,
  VLLM_ENGINE,
  comparedSeconds,
  type CalibrationRow,
} from "./calibration-scenarios";
