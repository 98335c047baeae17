import { joinNode, parseInput } from "@thaw/core";
import { JoinRequest, JoinResponse } from "@thaw/node-agent-client";
import { env } from "../../../../../env.ts";
import { getDb } from "../../../../../server/db.ts";
import { jsonRoute, readJsonBody } from "../../../../../server/http/json-route.ts";

/** POST /api/agent/v1/join — a one-time join token becomes a node and its credential. */
export const POST = jsonRoute(async (request) => {
  const input = parseInput(JoinRequest, await readJsonBody(request), "body");
  const joined = await joinNode({
    input,
    db: getDb(),
    credentialSecret: env().THAW_NODE_CREDENTIAL_SECRET,
  });
  return JoinResponse.parse(joined);
});
