import { actorCan, authenticateApiKey } from "@thaw/core";
import { bearerToken } from "../../../../server/http/json-route.ts";
import { liveEventResponse } from "../../../../server/live/live-events.ts";
import { restRoute } from "../../../../server/rest/rest-route.ts";

/** GET /api/v1/stream — server-sent events: the key's org's cold starts as they progress. */
export const GET = restRoute("endpoints:read", async ({ actor, request, db }) => ({
  response: await liveEventResponse({
    orgId: actor.orgId,
    principal: `api_key:${actor.apiKeyId}`,
    signal: request.signal,
    // A revoked or expired key's stream closes at the next re-check.
    stillAllowed: async () => {
      const again = await authenticateApiKey({ key: bearerToken(request), db }).catch(() => null);
      return again?.apiKeyId === actor.apiKeyId && actorCan(again, "endpoints:read");
    },
  }),
}));
