import { TelemetryBatch, TelemetryResponse } from "@thaw/protocol";
import { agentRoute } from "../../../../../server/agent-api/agent-route.ts";
import { ingestGrouped } from "../../../../../server/agent-api/telemetry-ingest.ts";
import { followThrough } from "../../../../../server/follow-through.ts";

/** POST /api/agent/v1/telemetry — phase events and outcomes of cold starts placed on this node. */
export const POST = agentRoute({
  authentication: "node-credential",
  body: TelemetryBatch,
  answer: TelemetryResponse,
  call: async ({ actor, input }) => {
    const outcome = await ingestGrouped({ actor, input });
    if (!outcome.ok) throw outcome.error;
    return followThrough(outcome.value);
  },
});
