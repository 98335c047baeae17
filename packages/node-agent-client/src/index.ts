// The clients of the agent protocol (its schemas and constants are @thaw/protocol's): the
// agent's client of the control plane, the scheduler's client of agents, the signatures on
// the scheduler's calls and the pinned-TLS fetch they go over. Node-only (node:crypto,
// node:https), so not in the protocol package.
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
