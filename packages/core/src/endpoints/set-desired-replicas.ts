import { createHash } from "node:crypto";
import type { DbClient } from "@thaw/db";
import { z } from "zod";
import { recordAudit } from "../audit/index.ts";
import { actorIdOf, assertCan, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { reconcileSoon, type WithFollowUps } from "../queues/follow-ups.ts";
import { recordWebhookEvents, webhookDeliveryFollowUps } from "../webhooks/record-webhook-event.ts";
import { scaledEvent } from "../webhooks/scaled-event.ts";
import { EndpointRef, findEndpoint } from "./find-endpoint.ts";

export const SetDesiredReplicasBody = z
  .object({ replicas: z.number().int().min(0).max(1_000) })
  .strict();

/** The dashboard's scale control: which endpoint, and the body REST's PUT …/replicas takes. */
export const SetDesiredReplicasRequest = z
  .object({ endpoint: EndpointRef })
  .extend(SetDesiredReplicasBody.shape)
  .strict();

// A type, not an interface: it is stored as the idempotent answer (a JSON column).
export type SetDesiredReplicasResult = {
  endpointId: string;
  slug: string;
  previousReplicas: number;
  desiredReplicas: number;
};

/**
 * The desired replica count of an endpoint (ARCHITECTURE.md §3 step 1): within min/max, written
 * with its ScaleEvent and audit entry in one transaction; reconciling it follows (a replayed
 * answer too: reconcile is level-triggered, so one more run costs nothing).
 * With an idempotency key, a retry of the same request gets the first answer and a
 * different request under the same key is a conflict.
 */
export async function setDesiredReplicas({
  actor,
  endpoint,
  input,
  idempotencyKey,
  source,
  traceparent = null,
  db,
}: {
  actor: Actor;
  endpoint: string;
  input: unknown;
  idempotencyKey?: string | null;
  source: "dashboard" | "api";
  /** The call's W3C trace context (checked by the transport): the cold starts it causes join its trace. */
  traceparent?: string | null;
  db: DbClient;
}): Promise<WithFollowUps<SetDesiredReplicasResult>> {
  assertCan(actor, "endpoints:scale");
  const body = parseInput(SetDesiredReplicasBody, input, "body");
  if (
    idempotencyKey !== undefined &&
    idempotencyKey !== null &&
    !/^[\x21-\x7e]{1,128}$/.test(idempotencyKey)
  )
    throw new AppError("BAD_REQUEST", "Idempotency-Key: 1–128 visible ASCII characters.", {
      field: "Idempotency-Key",
    });
  const requestHash = createHash("sha256")
    .update(JSON.stringify({ op: "set-desired-replicas", endpoint, body }))
    .digest("hex");
  let deliveryIds: string[] = [];
  const answer = await db.$transaction(async (tx) => {
    if (idempotencyKey) {
      const seen = await tx.idempotencyRecord.findUnique({
        where: { orgId_key: { orgId: actor.orgId, key: idempotencyKey } },
      });
      if (seen) {
        if (seen.requestHash !== requestHash)
          throw new AppError(
            "CONFLICT",
            "Idempotency-Key was already used for a different request.",
            { field: "Idempotency-Key" },
          );
        return seen.response as unknown as SetDesiredReplicasResult;
      }
    }
    const found = await findEndpoint(tx, actor, endpoint);
    // Serialise with other scale requests and with reconcile for this endpoint.
    await tx.$queryRaw`SELECT id FROM "Endpoint" WHERE id = ${found.id}::uuid FOR NO KEY UPDATE`;
    const row = await tx.endpoint.findUniqueOrThrow({ where: { id: found.id } });
    if (body.replicas < row.minReplicas || body.replicas > row.maxReplicas)
      throw new AppError(
        "UNPROCESSABLE",
        `body.replicas: ${body.replicas} is outside this endpoint's bounds ${row.minReplicas}–${row.maxReplicas}.`,
        { field: "body.replicas", minReplicas: row.minReplicas, maxReplicas: row.maxReplicas },
      );
    const result: SetDesiredReplicasResult = {
      endpointId: row.id,
      slug: row.slug,
      previousReplicas: row.desiredReplicas,
      desiredReplicas: body.replicas,
    };
    if (row.desiredReplicas !== body.replicas) {
      await tx.endpoint.update({
        where: { id: row.id },
        data: { desiredReplicas: body.replicas, version: { increment: 1 } },
      });
      const scaleEvent = await tx.scaleEvent.create({
        data: {
          orgId: actor.orgId,
          endpointId: row.id,
          source,
          previousDesired: row.desiredReplicas,
          desired: body.replicas,
          reason: idempotencyKey ? `Idempotency-Key ${idempotencyKey}` : "",
          actorType: actor.type,
          actorId: actorIdOf(actor),
          traceparent,
        },
      });
      await recordAudit(tx, actor, {
        action: "endpoint.scaled",
        targetType: "endpoint",
        targetId: row.id,
        metadata: { from: row.desiredReplicas, to: body.replicas },
      });
      deliveryIds = await recordWebhookEvents(tx, [scaledEvent(scaleEvent, row.slug)]);
    }
    if (idempotencyKey)
      await tx.idempotencyRecord.create({
        data: {
          orgId: actor.orgId,
          key: idempotencyKey,
          requestHash,
          status: 200,
          response: result,
        },
      });
    return result;
  });
  return {
    result: answer,
    followUps: [reconcileSoon(answer.endpointId), ...webhookDeliveryFollowUps(deliveryIds)],
  };
}
