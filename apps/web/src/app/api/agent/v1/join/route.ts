import { joinNode, parseInput } from "@thaw/core";
import { JoinRequest, JoinResponse } from "@thaw/protocol";
import { env } from "../../../../../env.ts";
import { getDb } from "../../../../../server/db.ts";
import { clientAddressOf } from "../../../../../server/http/client-of.ts";
import { jsonRoute, readJsonBody } from "../../../../../server/http/json-route.ts";
import { consumeLimit, limitKey } from "../../../../../server/limits/rate-limits.ts";

/**
 * POST /api/agent/v1/join — a one-time join token becomes a node and a new random credential
 * (shown once), answered with the scheduler's public key. The agent's address must be the
 * one it joins from, or inside THAW_AGENT_CIDRS, and https with its certificate's SHA-256.
 */
export const POST = jsonRoute(async (request) => {
  const sourceAddress = clientAddressOf(request);
  // Guessing tokens costs the address's API budget.
  await consumeLimit("apiPerAddress", limitKey("join", sourceAddress));
  const input = parseInput(JoinRequest, await readJsonBody(request), "body");
  const joined = await joinNode({
    input,
    db: getDb(),
    network: { agentCidrs: env().THAW_AGENT_CIDRS, sourceAddress },
    agentCallPublicKey: env().THAW_AGENT_CALL_PUBLIC_KEY,
  });
  return JoinResponse.parse(joined);
});
