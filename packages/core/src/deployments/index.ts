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
export {
  completeDeploymentSpec,
  type ArtifactInspector,
  type CompleteDeploymentSpec,
} from "./complete-deployment-spec.ts";
export { digestOfRef } from "./digest-of-ref.ts";
export {
  ArtifactsInspectionView,
  inspectArtifacts,
  InspectArtifactsRequest,
} from "./inspect-artifacts.ts";
export {
  DeploymentList,
  ListDeploymentsQuery,
  ListDeploymentsRequest,
  listDeployments,
} from "./list-deployments.ts";
export {
  IMAGE_REFERENCE,
  imageRefProblem,
  isTrustedRegistry,
  trustRegistries,
  MODEL_SOURCE_SCHEMES,
  modelSourceProblem,
  nonPublicHostReason,
} from "./source-policy.ts";
