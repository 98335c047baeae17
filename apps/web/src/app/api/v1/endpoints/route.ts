import { createEndpoint, listEndpointConfigs } from "@thaw/core";
import { artifactInspector } from "../../../../server/artifact-inspector.ts";
import { readJsonBody } from "../../../../server/http/json-route.ts";
import { orgQuotas } from "../../../../server/org-quotas.ts";
import { followThrough } from "../../../../server/follow-through.ts";
import { restRoute } from "../../../../server/rest/rest-route.ts";

/** GET /api/v1/endpoints — the org's endpoints with their active deployments. */
export const GET = restRoute("endpoints:read", async ({ actor, db }) => ({
  body: await listEndpointConfigs({ actor, db }),
}));

/** POST /api/v1/endpoints — a new endpoint and its first deployment. */
export const POST = restRoute("endpoints:write", async ({ request, actor, db }) => {
  const input = await readJsonBody(request, 64 * 1024);
  const created = await createEndpoint({
    actor,
    input,
    source: "api",
    where: "body",
    db,
    quotas: orgQuotas(),
    inspector: artifactInspector(),
  });
  return { status: 201, body: await followThrough(created) };
});
