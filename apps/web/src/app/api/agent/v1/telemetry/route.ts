import { authenticateNode, ingestTelemetry, parseInput } from "@thaw/core";
import { TelemetryBatch, TelemetryResponse } from "@thaw/node-agent-client";
import { getDb } from "../../../../../server/db.ts";
import { bearerToken, jsonRoute, readJsonBody } from "../../../../../server/http/json-route.ts";

/** POST /api/agent/v1/telemetry — phase events and outcomes of cold starts placed on this node. */
export const POST = jsonRoute(async (request) => {
  const db = getDb();
  const actor = await authenticateNode({ credential: bearerToken(request), db });
  const input = parseInput(TelemetryBatch, await readJsonBody(request), "body");
  return TelemetryResponse.parse(await ingestTelemetry({ actor, input, db }));
});
