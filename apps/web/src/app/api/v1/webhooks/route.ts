import { createWebhookSubscription, listWebhookSubscriptions } from "@thaw/core";
import { readJsonBody } from "../../../../server/http/json-route.ts";
import { restRoute } from "../../../../server/rest/rest-route.ts";
import { webhookConfig } from "../../../../server/webhook-config.ts";

/** GET /api/v1/webhooks — the org's webhook subscriptions, never their secrets. */
export const GET = restRoute("webhooks:manage", async ({ actor, db }) => ({
  body: await listWebhookSubscriptions({ actor, db }),
}));

/** POST /api/v1/webhooks — subscribe a URL to events; the answer shows the secret, once. */
export const POST = restRoute("webhooks:manage", async ({ request, actor, db }) => ({
  status: 201,
  body: await createWebhookSubscription({
    actor,
    input: await readJsonBody(request, 16 * 1024),
    db,
    config: webhookConfig(),
    where: "body",
  }),
}));
