import { deleteRegistryCredential } from "@thaw/core";
import { restRoute } from "../../../../../server/rest/rest-route.ts";

/** DELETE /api/v1/registry-credentials/{registry} — forget the org's credential for a registry. */
export const DELETE = restRoute("registries:manage", async ({ actor, params, db }) => ({
  body: await deleteRegistryCredential({ actor, registry: params.registry, db }),
}));
