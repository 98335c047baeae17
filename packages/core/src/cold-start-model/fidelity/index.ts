// @thaw/core/cold-start-model/fidelity: the model against published measurements (sim:fidelity).
// Its own entry point, not the cold-start model's: the case files are read from beside this
// module at run time (node:fs, import.meta.url), which no web bundle can carry.
export {
  FIDELITY_CASES_DIRECTORY,
  FidelityCase,
  collectFidelityCases,
  parseFidelityCaseFile,
} from "./fidelity-case";
export { loadFidelitySuite } from "./load-fidelity-suite";
export {
  comparedSecondsOf,
  predictCase,
  relativeError,
  type CasePrediction,
  type PhaseComparison,
} from "./predict-case";
export {
  FITTED_PARAMETERS,
  currentParameterValues,
  fitObjective,
  fitPhysics,
  physicsWith,
  type FittedParameter,
  type PhysicsFit,
  type PhysicsOverrides,
} from "./fit-physics";
export {
  TARGETS as FIDELITY_TARGETS,
  evaluateFidelity,
  fidelityReportJson,
  summarizeErrors,
  type CaseVerdict,
  type FidelityReport,
} from "./evaluate-fidelity";
