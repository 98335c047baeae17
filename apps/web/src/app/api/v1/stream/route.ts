import { liveEventResponse } from "../../../../server/live/live-events.ts";
import { restRoute } from "../../../../server/rest/rest-route.ts";

/** GET /api/v1/stream — server-sent events: the key's org's cold starts as they progress. */
export const GET = restRoute("endpoints:read", async ({ actor, request }) => ({
  response: await liveEventResponse(actor.orgId, request.signal),
}));
