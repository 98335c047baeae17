// @thaw/core/schemas: the schemas of core's API that a browser bundle may import (the
// dashboard's deploy wizard validates with them), so no rule is declared twice. zod,
// ipaddr.js and @thaw/protocol only: no Node API, no database; browser-safe.test.ts walks
// this module's imports and fails on anything else.
export {
  DeploymentSpec,
  DeploymentView,
  deriveImageLayers,
  Engine,
  ENGINE_PROFILE_DEFAULTS,
  ENGINES,
  EngineProfile,
  ImageRef,
  ModelSource,
} from "../deployments/deployment-spec.ts";
export {
  IMAGE_REFERENCE,
  imageRefProblem,
  trustRegistries,
  MODEL_SOURCE_SCHEMES,
  modelSourceProblem,
  nonPublicHostReason,
} from "../deployments/source-policy.ts";
export {
  AllowedPaths,
  clampDesired,
  CreateEndpointInput,
  DeletedEndpoint,
  EffectiveWaitPriceView,
  EndpointList,
  EndpointView,
  GpuSecondsPerWaitSecond,
  GpuType,
  KNOWN_GPU_MODELS,
  MAX_ENDPOINTS_PER_ORG,
  MAX_REPLICAS,
  scalingBoundsProblem,
  Slug,
  UpdateEndpointInput,
  WAIT_PRICE_MEANING,
} from "../endpoints/endpoint-spec.ts";
export { MAX_WARM_POOL_GPU_BUDGET } from "../orgs/org-settings-spec.ts";
export {
  MAX_GPU_SECONDS_PER_WAIT_SECOND,
  PLATFORM_WAIT_OBJECTIVE,
} from "../scheduling/wait-price.ts";
export { Objective, OrgRole, StartPath } from "../vocabulary/index.ts";
export { plainText } from "@thaw/protocol";
export { ImageInspectionView } from "../images/image-inspection-view.ts";
export { WEBHOOK_EVENT_TYPES, WebhookEventType } from "../webhooks/webhook-spec.ts";
export { BURN_RATE_CONDITIONS, formatBurnWindow } from "../alerts/burn-rate-conditions.ts";
