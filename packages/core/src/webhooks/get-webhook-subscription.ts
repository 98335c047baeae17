import type { DbClient } from "@thaw/db";
import { assertCan, type Actor } from "../auth/index.ts";
import { findWebhookSubscription } from "./find-webhook-subscription.ts";
import { toWebhookView, type WebhookView } from "./webhook-spec.ts";

/** One of the org's webhook subscriptions, without its secret. */
export async function getWebhookSubscription({
  actor,
  id,
  db,
}: {
  actor: Actor;
  id: unknown;
  db: DbClient;
}): Promise<WebhookView> {
  assertCan(actor, "webhooks:manage");
  return toWebhookView(await findWebhookSubscription(db, actor, id));
}
