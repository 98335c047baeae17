import { recordNodeHeartbeat } from "@thaw/core";
import { HeartbeatRequest, HeartbeatResponse } from "@thaw/protocol";
import { agentRoute } from "../../../../../server/agent-api/agent-route.ts";

/** POST /api/agent/v1/heartbeat — the node named by the bearer credential is alive. */
export const POST = agentRoute({
  authentication: "node-credential",
  body: HeartbeatRequest,
  answer: HeartbeatResponse,
  call: ({ actor, input, db }) => recordNodeHeartbeat({ actor, input, db }),
});
