import { createAlertRule, listAlertRules } from "@thaw/core";
import { readJsonBody } from "../../../../server/http/json-route.ts";
import { restRoute } from "../../../../server/rest/rest-route.ts";

/** GET /api/v1/alert-rules — the org's alert rules, each with its open episodes' count. */
export const GET = restRoute("endpoints:read", async ({ actor, db }) => ({
  body: await listAlertRules({ actor, db }),
}));

/** POST /api/v1/alert-rules — a slow-start rule or a time-to-ready SLO. */
export const POST = restRoute("alerts:manage", async ({ request, actor, db }) => ({
  status: 201,
  body: await createAlertRule({
    actor,
    input: await readJsonBody(request, 16 * 1024),
    db,
    where: "body",
  }),
}));
