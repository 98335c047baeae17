import { deleteEndpoint, getEndpoint, updateEndpoint } from "@thaw/core";
import { readJsonBody } from "../../../../../server/http/json-route.ts";
import { orgQuotas } from "../../../../../server/org-quotas.ts";
import { followThrough } from "../../../../../server/follow-through.ts";
import { restRoute } from "../../../../../server/rest/rest-route.ts";

/** GET /api/v1/endpoints/{endpoint} — configuration and active deployment. */
export const GET = restRoute("endpoints:read", async ({ actor, params, db }) => ({
  body: await getEndpoint({ actor, endpoint: params.endpoint, db }),
}));

/** PATCH /api/v1/endpoints/{endpoint} — name, scaling bounds, paths, objective, targets, price of waiting. */
export const PATCH = restRoute("endpoints:write", async ({ request, actor, params, db }) => {
  const input = await readJsonBody(request, 16 * 1024);
  const updated = await updateEndpoint({
    actor,
    endpoint: params.endpoint,
    input,
    source: "api",
    where: "body",
    db,
    quotas: orgQuotas(),
  });
  return { body: await followThrough(updated) };
});

/** DELETE /api/v1/endpoints/{endpoint} — soft delete; the scheduler drains its replicas. */
export const DELETE = restRoute("endpoints:write", async ({ actor, params, db }) => {
  const deleted = await deleteEndpoint({ actor, endpoint: params.endpoint, source: "api", db });
  return { body: await followThrough(deleted) };
});
