import { authenticateNode, ingestTelemetry, parseInput } from "@thaw/core";
import { TelemetryBatch, TelemetryResponse } from "@thaw/protocol";
import { getDb } from "../../../../../server/db.ts";
import { bearerToken, jsonRoute, readJsonBody } from "../../../../../server/http/json-route.ts";
import { publishColdStartProgress } from "../../../../../server/live/live-events.ts";
import { enqueue } from "../../../../../server/queue-producer.ts";

/** POST /api/agent/v1/telemetry — phase events and outcomes of cold starts placed on this node. */
export const POST = jsonRoute(async (request) => {
  const db = getDb();
  const actor = await authenticateNode({ credential: bearerToken(request), db });
  const input = parseInput(TelemetryBatch, await readJsonBody(request), "body");
  const result = await ingestTelemetry({ actor, input, db });
  // A closed start feeds the predictor, or is retried with the next-best option.
  for (const { coldStartId } of result.closed) await enqueue("history", { coldStartId });
  // The dashboard and /api/v1/stream listeners re-read these starts.
  await publishColdStartProgress(actor.orgId, {
    coldStartIds: [
      ...new Set([...input.events, ...input.outcomes].map((e) => e.coldStartId.toLowerCase())),
    ],
    closedIds: result.closed.map((c) => c.coldStartId),
  });
  return TelemetryResponse.parse(result);
});
