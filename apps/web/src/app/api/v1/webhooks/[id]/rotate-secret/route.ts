import { rotateWebhookSecret } from "@thaw/core";
import { restRoute } from "../../../../../../server/rest/rest-route.ts";
import { webhookConfig } from "../../../../../../server/webhook-config.ts";

/** POST /api/v1/webhooks/{id}/rotate-secret — a new secret, shown once; the old one signs 24 h more. */
export const POST = restRoute("webhooks:manage", async ({ actor, params, db }) => ({
  body: await rotateWebhookSecret({ actor, id: params.id, db, config: webhookConfig() }),
}));
