export { createDeployment, CreateDeploymentRequest } from "./create-deployment.ts";
export {
  DeploymentSpec,
  DeploymentView,
  deriveImageLayers,
  Engine,
  ENGINE_PROFILE_DEFAULTS,
  ENGINES,
  EngineProfile,
  ModelSource,
  ImageRef,
} from "./deployment-spec.ts";
export { digestOfRef } from "./digest-of-ref.ts";
export {
  DeploymentList,
  ListDeploymentsQuery,
  ListDeploymentsRequest,
  listDeployments,
} from "./list-deployments.ts";
export {
  IMAGE_REFERENCE,
  imageRefProblem,
  MODEL_SOURCE_SCHEMES,
  modelSourceProblem,
  nonPublicHostReason,
} from "./source-policy.ts";
