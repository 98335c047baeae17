import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { queued, type WithFollowUps } from "../queues/follow-ups.ts";
import { toWebhookDeliveryView } from "./webhook-delivery-view.ts";
import { WebhookId, type WebhookDeliveryView } from "./webhook-spec.ts";

/**
 * Sends a delivery again (after it failed, or to replay one that succeeded): the same message
 * (same `webhook-id`, so a receiver that already has it can tell), freshly signed, its attempts
 * numbered on from the last. One still being tried is a 409.
 */
export async function redeliverWebhook({
  actor,
  deliveryId,
  db,
  field = "deliveryId",
}: {
  actor: Actor;
  deliveryId: unknown;
  db: DbClient;
  /** How the request names the delivery's id (`id` in a REST path). */
  field?: string;
}): Promise<WithFollowUps<WebhookDeliveryView>> {
  assertCan(actor, "webhooks:manage");
  const id = parseInput(WebhookId, deliveryId, field);
  const view = await db.$transaction(async (tx) => {
    const found = await tx.webhookDelivery.findFirst({ where: { ...orgScope(actor), id } });
    if (!found)
      throw new AppError("NOT_FOUND", `${field}: no such webhook delivery in this org`, {
        field,
      });
    const { count } = await tx.webhookDelivery.updateMany({
      where: { id, status: { not: "pending" } },
      data: { status: "pending", nextAttemptAt: new Date(), lastError: null },
    });
    if (count === 0)
      throw new AppError("CONFLICT", `${field}: this delivery is still being tried`, { field });
    await recordAudit(tx, actor, {
      action: "webhook.redelivered",
      targetType: "webhook_delivery",
      targetId: id,
      metadata: { webhookId: found.subscriptionId, eventType: found.eventType },
    });
    const row = await tx.webhookDelivery.findUniqueOrThrow({
      where: { id },
      include: { attemptLog: { orderBy: { attempt: "desc" }, take: 20 } },
    });
    return toWebhookDeliveryView(row);
  });
  return { result: view, followUps: [queued("webhookDelivery", { deliveryId: id })] };
}
