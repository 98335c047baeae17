import { listRegistryCredentials, putRegistryCredential } from "@thaw/core";
import { readJsonBody } from "../../../../server/http/json-route.ts";
import { restRoute } from "../../../../server/rest/rest-route.ts";
import { sealingKey } from "../../../../server/sealing-key.ts";

/** GET /api/v1/registry-credentials — the org's registry credentials, never their secrets. */
export const GET = restRoute("registries:manage", async ({ actor, db }) => ({
  body: await listRegistryCredentials({ actor, db }),
}));

/** PUT /api/v1/registry-credentials — store or replace the credential for one registry. */
export const PUT = restRoute("registries:manage", async ({ request, actor, db }) => ({
  body: await putRegistryCredential({
    actor,
    input: await readJsonBody(request, 16 * 1024),
    db,
    sealingKey: sealingKey(),
    where: "body",
  }),
}));
