import { getEndpointStatus } from "@thaw/core";
import { restRoute } from "../../../../../../server/rest/rest-route.ts";

/** GET /api/v1/endpoints/{endpoint}/status — replicas by state and recent time-to-ready. */
export const GET = restRoute("endpoints:read", async ({ actor, params, db }) => ({
  body: await getEndpointStatus({ actor, endpoint: params.endpoint ?? "", db }),
}));
