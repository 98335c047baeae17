import type { DbClient } from "@thaw/db";
import { z } from "zod";
import { recordAudit } from "../audit/index.ts";
import { actorIdOf, assertCan, type Actor } from "../auth/index.ts";
import { reconcileSoon, type WithFollowUps } from "../queues/follow-ups.ts";
import { recordWebhookEvents, webhookDeliveryFollowUps } from "../webhooks/record-webhook-event.ts";
import { scaledEvent } from "../webhooks/scaled-event.ts";
import { EndpointRef, findEndpoint } from "./find-endpoint.ts";

/** The dashboard's call: which endpoint to delete. */
export const DeleteEndpointRequest = z.object({ endpoint: EndpointRef }).strict();

/**
 * Soft-deletes an endpoint: deletedAt, desired 0 and a version bump under its row lock,
 * with a ScaleEvent and an audit entry. Reconciling it follows: a deleted endpoint wants
 * nothing, so its replicas are drained; its cold starts stay as history.
 * The slug is freed (renamed `<slug>--deleted-<id>`) so a new endpoint may take it.
 */
export async function deleteEndpoint({
  actor,
  endpoint,
  db,
  source,
  now = new Date(),
}: {
  actor: Actor;
  endpoint: unknown;
  db: DbClient;
  source: "dashboard" | "api";
  now?: Date;
}): Promise<WithFollowUps<{ id: string; slug: string; deletedAt: string }>> {
  assertCan(actor, "endpoints:write");
  let deliveryIds: string[] = [];
  const deleted = await db.$transaction(async (tx) => {
    const found = await findEndpoint(tx, actor, endpoint);
    await tx.$queryRaw`SELECT id FROM "Endpoint" WHERE id = ${found.id}::uuid FOR UPDATE`;
    const row = await tx.endpoint.findUniqueOrThrow({ where: { id: found.id } });
    await tx.endpoint.update({
      where: { id: row.id },
      data: {
        deletedAt: now,
        desiredReplicas: 0,
        slug: `${row.slug.slice(0, 40)}--deleted-${row.id.replaceAll("-", "").slice(-12)}`,
        version: { increment: 1 },
      },
    });
    if (row.desiredReplicas !== 0) {
      const scaleEvent = await tx.scaleEvent.create({
        data: {
          orgId: actor.orgId,
          endpointId: row.id,
          source,
          previousDesired: row.desiredReplicas,
          desired: 0,
          reason: "endpoint deleted",
          actorType: actor.type,
          actorId: actorIdOf(actor),
        },
      });
      deliveryIds = await recordWebhookEvents(tx, [scaledEvent(scaleEvent, row.slug)]);
    }
    await recordAudit(tx, actor, {
      action: "endpoint.deleted",
      targetType: "endpoint",
      targetId: row.id,
      metadata: { slug: row.slug, desiredReplicas: row.desiredReplicas },
    });
    return { id: row.id, slug: row.slug, deletedAt: now.toISOString() };
  });
  return {
    result: deleted,
    followUps: [reconcileSoon(deleted.id), ...webhookDeliveryFollowUps(deliveryIds)],
  };
}
