import { createDeployment, listDeployments } from "@thaw/core";
import { artifactInspector } from "../../../../../../server/artifact-inspector.ts";
import { readJsonBody } from "../../../../../../server/http/json-route.ts";
import { followThrough } from "../../../../../../server/follow-through.ts";
import { restRoute } from "../../../../../../server/rest/rest-route.ts";

/** GET /api/v1/endpoints/{endpoint}/deployments?limit= — versions, newest first. */
export const GET = restRoute("endpoints:read", async ({ request, actor, params, db }) => ({
  body: await listDeployments({
    actor,
    endpoint: params.endpoint,
    input: Object.fromEntries(new URL(request.url).searchParams),
    where: "query",
    db,
  }),
}));

/** POST /api/v1/endpoints/{endpoint}/deployments — roll to a new version. */
export const POST = restRoute("deployments:write", async ({ request, actor, params, db }) => {
  const input = await readJsonBody(request, 64 * 1024);
  const deployment = await createDeployment({
    actor,
    endpoint: params.endpoint,
    input,
    where: "body",
    db,
    inspector: artifactInspector(),
  });
  return { status: 201, body: await followThrough(deployment) };
});
