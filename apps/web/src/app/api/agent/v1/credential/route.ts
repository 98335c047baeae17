import { authenticateNode, renewNodeCredential } from "@thaw/core";
import { CredentialResponse } from "@thaw/protocol";
import { getDb } from "../../../../../server/db.ts";
import { bearerToken, jsonRoute, readJsonBody } from "../../../../../server/http/json-route.ts";

/**
 * POST /api/agent/v1/credential — the node named by the bearer credential gets a new one
 * (after an operator rotated it; the heartbeat answer says so). The current credential works
 * until the new one is first used.
 */
export const POST = jsonRoute(async (request) => {
  const db = getDb();
  const actor = await authenticateNode({ credential: bearerToken(request), db });
  // The body is empty; read (bounded) so that nothing is left on the connection.
  await readJsonBody(request);
  return CredentialResponse.parse(await renewNodeCredential({ actor, db }));
});
