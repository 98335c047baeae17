import { listWebhookDeliveries } from "@thaw/core";
import { restRoute } from "../../../../../../server/rest/rest-route.ts";

/** GET /api/v1/webhooks/{id}/deliveries?limit=&status= — newest first, with each attempt's answer. */
export const GET = restRoute("webhooks:manage", async ({ request, actor, params, db }) => ({
  body: await listWebhookDeliveries({
    actor,
    id: params.id,
    query: Object.fromEntries(new URL(request.url).searchParams),
    db,
  }),
}));
