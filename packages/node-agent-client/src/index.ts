export * from "./protocol.ts";
export {
  ControlPlaneClient,
  ControlPlaneError,
  type ControlPlaneClientOptions,
} from "./control-plane-client.ts";
export * from "./agent-client.ts";
export { keepAliveFetch, type KeepAliveFetchOptions } from "./keep-alive-fetch.ts";
