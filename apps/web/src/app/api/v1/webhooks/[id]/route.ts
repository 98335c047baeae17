import {
  deleteWebhookSubscription,
  getWebhookSubscription,
  updateWebhookSubscription,
} from "@thaw/core";
import { readJsonBody } from "../../../../../server/http/json-route.ts";
import { restRoute } from "../../../../../server/rest/rest-route.ts";
import { webhookConfig } from "../../../../../server/webhook-config.ts";

/** GET /api/v1/webhooks/{id} — one subscription, without its secret. */
export const GET = restRoute("webhooks:manage", async ({ actor, params, db }) => ({
  body: await getWebhookSubscription({ actor, id: params.id, db }),
}));

/** PATCH /api/v1/webhooks/{id} — URL, description, event types, enabled. */
export const PATCH = restRoute("webhooks:manage", async ({ request, actor, params, db }) => ({
  body: await updateWebhookSubscription({
    actor,
    id: params.id,
    input: await readJsonBody(request, 16 * 1024),
    db,
    config: webhookConfig(),
    where: "body",
  }),
}));

/** DELETE /api/v1/webhooks/{id} — the subscription and its delivery log. */
export const DELETE = restRoute("webhooks:manage", async ({ actor, params, db }) => ({
  body: await deleteWebhookSubscription({ actor, id: params.id, db }),
}));
