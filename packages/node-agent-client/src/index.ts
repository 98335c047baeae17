export * from "./protocol.ts";
export {
  ControlPlaneClient,
  ControlPlaneError,
  type ControlPlaneClientOptions,
} from "./control-plane-client.ts";
export * from "./agent-client.ts";
export * from "./agent-call-signature.ts";
export {
  CertificatePinError,
  certificateSha256,
  keepAliveFetch,
  type KeepAliveFetchOptions,
  type PinnedFetch,
  type PinnedRequestInit,
  type PinnedResponse,
} from "./keep-alive-fetch.ts";
