import { redeliverWebhook } from "@thaw/core";
import { followThrough } from "../../../../../../server/follow-through.ts";
import { restRoute } from "../../../../../../server/rest/rest-route.ts";

/** POST /api/v1/webhook-deliveries/{id}/redeliver — send a delivery again, same webhook-id. */
export const POST = restRoute("webhooks:manage", async ({ actor, params, db }) => ({
  status: 202,
  body: await followThrough(
    await redeliverWebhook({ actor, deliveryId: params.id, db, field: "id" }),
  ),
}));
