export { EndpointRef, findEndpoint } from "./find-endpoint.ts";
export { getEndpointStatus } from "./get-endpoint-status.ts";
export { EndpointTableRow, EndpointTable, listEndpoints } from "./list-endpoints.ts";
export {
  SetDesiredReplicasBody,
  SetDesiredReplicasRequest,
  setDesiredReplicas,
  type SetDesiredReplicasResult,
} from "./set-desired-replicas.ts";
export {
  EndpointStatusResponse,
  ErrorResponse,
  SetDesiredReplicasResponse,
} from "./rest-schemas.ts";
export { applyLoadSignal, LoadSignalBody, LoadSignalResponse } from "./apply-load-signal.ts";
export {
  AllowedPaths,
  clampDesired,
  CreateEndpointInput,
  DeletedEndpoint,
  EffectiveWaitPriceView,
  GpuSecondsPerWaitSecond,
  WAIT_PRICE_MEANING,
  EndpointList,
  EndpointView,
  GpuType,
  KNOWN_GPU_MODELS,
  MAX_ENDPOINTS_PER_ORG,
  MAX_REPLICAS,
  scalingBoundsProblem,
  Slug,
  UpdateEndpointInput,
} from "./endpoint-spec.ts";
export { createEndpoint, resolveGpuType } from "./create-endpoint.ts";
export { getEndpoint } from "./get-endpoint.ts";
export { listEndpointConfigs } from "./list-endpoint-configs.ts";
export { updateEndpoint, UpdateEndpointRequest } from "./update-endpoint.ts";
export { deleteEndpoint, DeleteEndpointRequest } from "./delete-endpoint.ts";
export {
  ListEndpointColdStartsQuery,
  listEndpointColdStarts,
} from "./list-endpoint-cold-starts.ts";
export {
  ColdStartDetail,
  ColdStartList,
  ColdStartSummary,
  PredictionCalibrationView,
} from "./rest-schemas.ts";
