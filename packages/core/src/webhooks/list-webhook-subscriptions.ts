import type { DbClient } from "@thaw/db";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { toWebhookView, type WebhookView } from "./webhook-spec.ts";

/** The org's webhook subscriptions, oldest first, never with their secrets. */
export async function listWebhookSubscriptions({
  actor,
  db,
}: {
  actor: Actor;
  db: DbClient;
}): Promise<{ webhooks: WebhookView[] }> {
  assertCan(actor, "webhooks:manage");
  const rows = await db.webhookSubscription.findMany({
    where: orgScope(actor),
    orderBy: { createdAt: "asc" },
    take: 500,
  });
  return { webhooks: rows.map(toWebhookView) };
}
