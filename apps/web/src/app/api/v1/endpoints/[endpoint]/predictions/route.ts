import { predictEndpointPaths } from "@thaw/core";
import { restRoute } from "../../../../../../server/rest/rest-route.ts";

/** GET /api/v1/endpoints/{endpoint}/predictions — predicted time-to-ready of each path now. */
export const GET = restRoute("endpoints:read", async ({ actor, params, db }) => ({
  body: await predictEndpointPaths({ actor, endpoint: params.endpoint ?? "", db }),
}));
