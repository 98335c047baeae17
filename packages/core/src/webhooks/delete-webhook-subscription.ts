import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { findWebhookSubscription } from "./find-webhook-subscription.ts";

/** Deletes a subscription with its delivery log; jobs still queued for it find nothing to send. */
export async function deleteWebhookSubscription({
  actor,
  id,
  db,
}: {
  actor: Actor;
  id: unknown;
  db: DbClient;
}): Promise<{ id: string; deleted: true }> {
  assertCan(actor, "webhooks:manage");
  return db.$transaction(async (tx) => {
    const row = await findWebhookSubscription(tx, actor, id);
    await tx.webhookSubscription.delete({ where: { id: row.id } });
    await recordAudit(tx, actor, {
      action: "webhook.deleted",
      targetType: "webhook",
      targetId: row.id,
      metadata: { host: new URL(row.url).host },
    });
    return { id: row.id, deleted: true as const };
  });
}
