import { inspectArtifacts } from "@thaw/core";
import { artifactInspector } from "../../../../server/artifact-inspector.ts";
import { readJsonBody } from "../../../../server/http/json-route.ts";
import { restRoute } from "../../../../server/rest/rest-route.ts";

/** POST /api/v1/inspections — what a deployment of this image and model would be made from. */
export const POST = restRoute("deployments:write", async ({ request, actor }) => ({
  body: await inspectArtifacts({
    actor,
    input: await readJsonBody(request, 16 * 1024),
    inspector: artifactInspector(),
    where: "body",
  }),
}));
