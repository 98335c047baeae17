import { getEndpointGpuCost } from "@thaw/core";
import { restRoute } from "../../../../../../server/rest/rest-route.ts";

/** GET /api/v1/endpoints/{endpoint}/cost?from=&to=&bucket= — its GPU time and cost by category. */
export const GET = restRoute("endpoints:read", async ({ request, actor, params, db }) => ({
  body: await getEndpointGpuCost({
    actor,
    endpoint: params.endpoint,
    input: Object.fromEntries(new URL(request.url).searchParams),
    db,
  }),
}));
