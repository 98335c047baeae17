import { joinNode } from "@thaw/core";
import { JoinRequest, JoinResponse } from "@thaw/protocol";
import { env } from "../../../../../env.ts";
import { agentRoute } from "../../../../../server/agent-api/agent-route.ts";

/**
 * POST /api/agent/v1/join — a one-time join token becomes a node and a new random credential
 * (shown once), answered with the scheduler's public key. The agent's address must be the
 * one it joins from, or inside THAW_AGENT_CIDRS, and https with its certificate's SHA-256.
 */
export const POST = agentRoute({
  authentication: "join-token",
  body: JoinRequest,
  answer: JoinResponse,
  call: ({ input, db, sourceAddress }) =>
    joinNode({
      input,
      db,
      network: { agentCidrs: env().THAW_AGENT_CIDRS, sourceAddress },
      agentCallPublicKey: env().THAW_AGENT_CALL_PUBLIC_KEY,
    }),
});
