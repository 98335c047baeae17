import { applyLoadSignal } from "@thaw/core";
import { readJsonBody } from "../../../../../../server/http/json-route.ts";
import { followThrough } from "../../../../../../server/follow-through.ts";
import { restRoute } from "../../../../../../server/rest/rest-route.ts";

/** POST /api/v1/endpoints/{endpoint}/signals {"inFlightRequests", "queueDepth"} → desired count. */
export const POST = restRoute(
  "endpoints:scale",
  async ({ request, actor, params, db, traceparent }) => {
    const decision = await applyLoadSignal({
      actor,
      endpoint: params.endpoint ?? "",
      input: await readJsonBody(request, 4_096),
      traceparent,
      db,
    });
    return { body: await followThrough(decision) };
  },
);
