import { listEndpointColdStarts } from "@thaw/core";
import { restRoute } from "../../../../../../server/rest/rest-route.ts";

/** GET /api/v1/endpoints/{endpoint}/cold-starts?limit= — recent cold starts, newest first. */
export const GET = restRoute("endpoints:read", async ({ request, actor, params, db }) => ({
  body: await listEndpointColdStarts({
    actor,
    endpoint: params.endpoint,
    input: Object.fromEntries(new URL(request.url).searchParams),
    db,
  }),
}));
