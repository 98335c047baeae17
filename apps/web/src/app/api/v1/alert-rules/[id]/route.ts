import { deleteAlertRule, getAlertRule, updateAlertRule } from "@thaw/core";
import { followThrough } from "../../../../../server/follow-through.ts";
import { readJsonBody } from "../../../../../server/http/json-route.ts";
import { restRoute } from "../../../../../server/rest/rest-route.ts";

/** GET /api/v1/alert-rules/{id} — one rule. */
export const GET = restRoute("endpoints:read", async ({ actor, params, db }) => ({
  body: await getAlertRule({ actor, id: params.id, db }),
}));

/** PATCH /api/v1/alert-rules/{id} — rename, enable or disable (resolving its episodes), retune an SLO. */
export const PATCH = restRoute("alerts:manage", async ({ request, actor, params, db }) => ({
  body: await followThrough(
    await updateAlertRule({
      actor,
      id: params.id,
      input: await readJsonBody(request, 16 * 1024),
      db,
      where: "body",
    }),
  ),
}));

/** DELETE /api/v1/alert-rules/{id} — the rule and its episodes. */
export const DELETE = restRoute("alerts:manage", async ({ actor, params, db }) => ({
  body: await deleteAlertRule({ actor, id: params.id, db }),
}));
