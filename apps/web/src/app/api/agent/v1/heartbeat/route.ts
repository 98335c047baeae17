import { authenticateNode, parseInput, recordNodeHeartbeat } from "@thaw/core";
import { HeartbeatRequest, HeartbeatResponse } from "@thaw/protocol";
import { getDb } from "../../../../../server/db.ts";
import { bearerToken, jsonRoute, readJsonBody } from "../../../../../server/http/json-route.ts";

/** POST /api/agent/v1/heartbeat — the node named by the bearer credential is alive. */
export const POST = jsonRoute(async (request) => {
  const db = getDb();
  const actor = await authenticateNode({ credential: bearerToken(request), db });
  const input = parseInput(HeartbeatRequest, await readJsonBody(request), "body");
  return HeartbeatResponse.parse(await recordNodeHeartbeat({ actor, input, db }));
});
