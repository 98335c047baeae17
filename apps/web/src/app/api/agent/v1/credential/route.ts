import { renewNodeCredential } from "@thaw/core";
import { CredentialResponse } from "@thaw/protocol";
import { z } from "zod";
import { agentRoute } from "../../../../../server/agent-api/agent-route.ts";

/**
 * POST /api/agent/v1/credential — the node named by the bearer credential gets a new one
 * (after an operator rotated it; the heartbeat answer says so). The current credential works
 * until the new one is first used.
 */
export const POST = agentRoute({
  authentication: "node-credential",
  // Nothing is asked in the body (the client sends {}): it is read, bounded, and not looked at.
  body: z.unknown(),
  answer: CredentialResponse,
  call: ({ actor, db }) => renewNodeCredential({ actor, db }),
});
