export {
  addressInCidrs,
  agentUrlProblem,
  cidrListEnv,
  classifyAgentFailure,
  protocolRefusal,
  normalizeAddress,
  parseCidrList,
  type AgentAction,
  type AgentNetwork,
  type Cidr,
} from "./agent-address.ts";
export { authenticateNode } from "./authenticate-node.ts";
export { drainNode } from "./drain-node.ts";
export { renewNodeCredential } from "./renew-node-credential.ts";
export { revokeNode } from "./revoke-node.ts";
export { RotationRequested, rotateNodeCredential } from "./rotate-node-credential.ts";
export {
  CreatedJoinToken,
  createJoinToken,
  CreateJoinTokenInput,
  JOIN_TOKEN_KIND,
} from "./create-join-token.ts";
export {
  HEARTBEAT_INTERVAL_SECONDS,
  joinNode,
  NODE_CREDENTIAL_KIND,
  type JoinNodeInput,
} from "./join-node.ts";
export { markLostNodes, NODE_LOST_AFTER_SECONDS } from "./mark-lost-nodes.ts";
export { listNodes, NODE_STALE_AFTER_SECONDS, NodeList, NodeView } from "./list-nodes.ts";
export { NodeActionRequest, OperatedNode, RotateCredentialRequest } from "./node-action-request.ts";
export { recordNodeHeartbeat, type NodeHeartbeatInput } from "./record-node-heartbeat.ts";
