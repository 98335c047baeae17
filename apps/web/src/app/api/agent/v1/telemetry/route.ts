import { TelemetryBatch, TelemetryResponse } from "@thaw/protocol";
import { agentRoute } from "../../../../../server/agent-api/agent-route.ts";
import { ingestGrouped } from "../../../../../server/agent-api/telemetry-ingest.ts";
import { followThrough } from "../../../../../server/follow-through.ts";
import { webMetrics } from "../../../../../server/metrics/web-metrics.ts";

/** POST /api/agent/v1/telemetry — phase events and outcomes of cold starts placed on this node. */
export const POST = agentRoute({
  authentication: "node-credential",
  body: TelemetryBatch,
  answer: TelemetryResponse,
  call: async ({ actor, input }) => {
    const outcome = await ingestGrouped({ actor, input });
    if (!outcome.ok) throw outcome.error;
    const answer = await followThrough(outcome.value);
    const { telemetryRecords } = webMetrics();
    telemetryRecords.inc({ result: "stored" }, answer.accepted);
    telemetryRecords.inc({ result: "duplicate" }, answer.duplicates);
    return answer;
  },
});
