import { createHash } from "node:crypto";
import { Prisma, type Db } from "@thaw/db";
import { uuidV7 } from "../placement/uuid-v7.ts";
import { queued, type FollowUp } from "../queues/follow-ups.ts";
import type { WebhookEventType } from "./webhook-spec.ts";

// The outbox: an event becomes one WebhookDelivery row per enabled subscription of its org to
// its type, written with the change it reports (the caller's transaction, where it has one);
// the caller then enqueues a delivery job per row. The event's key (what happened to which
// row) names the message, so an event recorded twice is delivered once.

export interface WebhookEvent {
  orgId: string;
  type: WebhookEventType;
  /** What happened to which row, unique per event, e.g. the cold start's id. */
  key: string;
  data: Record<string, unknown>;
  at?: Date;
}

/** The Standard Webhooks message id of an event: `msg_` and a digest of its type and key. */
export function webhookMessageId(type: string, key: string): string {
  return `msg_${createHash("sha256").update(`${type}:${key}`).digest("base64url").slice(0, 32)}`;
}

/** Writes the deliveries of some events; the ids of the rows written (none when none match). */
export async function recordWebhookEvents(
  db: Db,
  events: readonly WebhookEvent[],
): Promise<string[]> {
  if (events.length === 0) return [];
  const orgIds = [...new Set(events.map((e) => e.orgId))];
  const subscriptions = await db.webhookSubscription.findMany({
    where: {
      orgId: { in: orgIds },
      enabled: true,
      eventTypes: { hasSome: [...new Set(events.map((e) => e.type))] },
    },
    select: { id: true, orgId: true, eventTypes: true },
  });
  const rows = webhookDeliveryRows(events, subscriptions);
  if (rows.length === 0) return [];
  const written = await db.webhookDelivery.createManyAndReturn({
    data: rows,
    skipDuplicates: true,
    select: { id: true },
  });
  return written.map((r) => r.id);
}

/** A delivery row to write: one per event and enabled subscription of its org to its type. */
export interface WebhookDeliveryRow {
  orgId: string;
  subscriptionId: string;
  messageId: string;
  eventType: string;
  payload: object;
}

/** The delivery rows of some events for the given enabled subscriptions (pure). */
export function webhookDeliveryRows(
  events: readonly WebhookEvent[],
  subscriptions: readonly { id: string; orgId: string; eventTypes: readonly string[] }[],
): WebhookDeliveryRow[] {
  return events.flatMap((event) => {
    const messageId = webhookMessageId(event.type, event.key);
    const payload = {
      type: event.type,
      timestamp: (event.at ?? new Date()).toISOString(),
      data: event.data,
    };
    return subscriptions
      .filter((s) => s.orgId === event.orgId && s.eventTypes.includes(event.type))
      .map((s) => ({
        orgId: event.orgId,
        subscriptionId: s.id,
        messageId,
        eventType: event.type,
        payload: JSON.parse(JSON.stringify(payload)) as object,
      }));
  });
}

/**
 * recordWebhookEvents' write of delivery rows as one INSERT … RETURNING id, for a caller that
 * folds its writes into one statement (the scale call's, as a CTE). Like the Prisma write,
 * a row already written for the same message and subscription is skipped.
 */
export function webhookDeliveriesInsertSql(
  rows: readonly WebhookDeliveryRow[],
  at: Date,
): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO "WebhookDelivery" (id, "orgId", "subscriptionId", "messageId", "eventType",
                                   payload, "updatedAt")
    SELECT d.id, d."orgId", d."subscriptionId", d."messageId", d."eventType", d.payload::jsonb,
           ${at}
    FROM unnest(${rows.map(() => uuidV7())}::uuid[], ${rows.map((d) => d.orgId)}::uuid[],
                ${rows.map((d) => d.subscriptionId)}::uuid[], ${rows.map((d) => d.messageId)}::text[],
                ${rows.map((d) => d.eventType)}::text[],
                ${rows.map((d) => JSON.stringify(d.payload))}::text[])
      AS d(id, "orgId", "subscriptionId", "messageId", "eventType", payload)
    ON CONFLICT ("subscriptionId", "messageId") DO NOTHING
    RETURNING id`;
}

/** The delivery jobs of the rows recordWebhookEvents wrote. */
export function webhookDeliveryFollowUps(deliveryIds: readonly string[]): FollowUp[] {
  return deliveryIds.map((deliveryId) => queued("webhookDelivery", { deliveryId }));
}
