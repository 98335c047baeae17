import type { DbClient } from "@thaw/db";
import { assertCan, type Actor } from "../auth/index.ts";
import { parseInput } from "../errors/index.ts";
import { findWebhookSubscription } from "./find-webhook-subscription.ts";
import { toWebhookDeliveryView } from "./webhook-delivery-view.ts";
import { ListWebhookDeliveriesQuery, type WebhookDeliveryView } from "./webhook-spec.ts";

/** Attempts kept in each delivery's answer (the newest). */
const ATTEMPTS_SHOWN = 20;

/** A subscription's deliveries, newest first, each with its latest attempts' answers. */
export async function listWebhookDeliveries({
  actor,
  id,
  query,
  db,
  where = "query",
}: {
  actor: Actor;
  id: unknown;
  query: unknown;
  db: DbClient;
  where?: string;
}): Promise<{ deliveries: WebhookDeliveryView[] }> {
  assertCan(actor, "webhooks:manage");
  const q = parseInput(ListWebhookDeliveriesQuery, query ?? {}, where);
  const subscription = await findWebhookSubscription(db, actor, id);
  const rows = await db.webhookDelivery.findMany({
    where: { subscriptionId: subscription.id, ...(q.status && { status: q.status }) },
    orderBy: { createdAt: "desc" },
    take: q.limit,
    include: { attemptLog: { orderBy: { attempt: "desc" }, take: ATTEMPTS_SHOWN } },
  });
  return { deliveries: rows.map(toWebhookDeliveryView) };
}
