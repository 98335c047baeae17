import { getColdStart } from "@thaw/core";
import { restRoute } from "../../../../../server/rest/rest-route.ts";

/** GET /api/v1/cold-starts/{id} — one cold start with its phases and the options considered. */
export const GET = restRoute("endpoints:read", async ({ actor, params, db }) => ({
  body: await getColdStart({ actor, input: { id: params.id }, db }),
}));
