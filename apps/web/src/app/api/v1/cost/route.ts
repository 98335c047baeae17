import { getOrgGpuCost } from "@thaw/core";
import { restRoute } from "../../../../server/rest/rest-route.ts";

/** GET /api/v1/cost?from=&to=&bucket= — the org's GPU time and cost, and each endpoint's share. */
export const GET = restRoute("endpoints:read", async ({ request, actor, db }) => ({
  body: await getOrgGpuCost({
    actor,
    input: Object.fromEntries(new URL(request.url).searchParams),
    db,
  }),
}));
