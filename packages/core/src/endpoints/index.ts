export { findEndpoint } from "./find-endpoint.ts";
export { getEndpointStatus } from "./get-endpoint-status.ts";
export { listEndpoints } from "./list-endpoints.ts";
export {
  SetDesiredReplicasBody,
  setDesiredReplicas,
  type SetDesiredReplicasResult,
} from "./set-desired-replicas.ts";
export {
  EndpointStatusResponse,
  ErrorResponse,
  SetDesiredReplicasResponse,
} from "./rest-schemas.ts";
export { applyLoadSignal, LoadSignalBody, LoadSignalResponse } from "./apply-load-signal.ts";
