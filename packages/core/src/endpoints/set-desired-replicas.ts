import { createHash } from "node:crypto";
import { directSql, Prisma, type DbClient, type SqlTransaction } from "@thaw/db";
import { z } from "zod";
import { auditInsertSql } from "../audit/index.ts";
import { actorIdOf, assertCan, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { reconcileSoon, type WithFollowUps } from "../queues/follow-ups.ts";
import { uuidV7 } from "../placement/uuid-v7.ts";
import {
  webhookDeliveriesInsertSql,
  webhookDeliveryFollowUps,
  webhookDeliveryRows,
} from "../webhooks/record-webhook-event.ts";
import { scaledEvent } from "../webhooks/scaled-event.ts";
import { EndpointRef, endpointNotFound, endpointRefOf } from "./find-endpoint.ts";

const SCALED_EVENT_TYPE = "endpoint.scaled";

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
  const request: ScaleRequest = {
    actor,
    ref: endpointRefOf(endpoint),
    endpoint,
    body,
    idempotencyKey,
    requestHash,
    source,
    traceparent,
  };
  const write = () => directSql(db).transaction((tx) => scaleInTransaction(tx, request));
  let outcome: ScaleOutcome;
  try {
    outcome = await write();
  } catch (error) {
    // Two requests with one new key at once: the one that lost the key's insert rolled
    // back; run again, it now finds the winner's answer (a replay, or a conflict).
    if (!(error instanceof IdempotencyKeyRaced)) throw error;
    outcome = await write();
  }
  const { answer, deliveryIds } = outcome;
  return {
    result: answer,
    followUps: [reconcileSoon(answer.endpointId), ...webhookDeliveryFollowUps(deliveryIds)],
  };
}

/** One scale request, checked: what the transaction needs of it. */
interface ScaleRequest {
  actor: Actor;
  ref: { id: string } | { slug: string };
  endpoint: string;
  body: z.infer<typeof SetDesiredReplicasBody>;
  idempotencyKey: string | null | undefined;
  requestHash: string;
  source: "dashboard" | "api";
  traceparent: string | null;
}

interface ScaleOutcome {
  answer: SetDesiredReplicasResult;
  deliveryIds: string[];
}

class IdempotencyKeyRaced extends Error {}

// Four round trips (BEGIN, lock and read, one write, COMMIT; one more with a key) on
// node-postgres rather than Prisma's ten: at 50 scale events/s the web's pool was the
// queue, its connections held by interactive transactions between statements
// (bench:warm-handover).
async function scaleInTransaction(
  tx: SqlTransaction,
  { actor, ref, endpoint, body, idempotencyKey, requestHash, source, traceparent }: ScaleRequest,
): Promise<ScaleOutcome> {
  if (idempotencyKey) {
    const [seen] = await tx.rows<{ requestHash: string; response: SetDesiredReplicasResult }>(
      Prisma.sql`
        SELECT "requestHash", response FROM "IdempotencyRecord"
        WHERE "orgId" = ${actor.orgId}::uuid AND key = ${idempotencyKey}`,
    );
    if (seen) {
      if (seen.requestHash !== requestHash)
        throw new AppError(
          "CONFLICT",
          "Idempotency-Key was already used for a different request.",
          {
            field: "Idempotency-Key",
          },
        );
      return { answer: seen.response, deliveryIds: [] };
    }
  }
  // Serialises with other scale requests and with reconcile for this endpoint; the org's
  // subscriptions to endpoint.scaled come along for the outbox.
  const [row] = await tx.rows<{
    id: string;
    slug: string;
    minReplicas: number;
    maxReplicas: number;
    desiredReplicas: number;
    subscriptionIds: string[];
  }>(Prisma.sql`
    SELECT e.id::text, e.slug, e."minReplicas", e."maxReplicas", e."desiredReplicas",
      ARRAY(SELECT s.id::text FROM "WebhookSubscription" s
            WHERE s."orgId" = e."orgId" AND s.enabled
              AND ${SCALED_EVENT_TYPE} = ANY(s."eventTypes")) AS "subscriptionIds"
    FROM "Endpoint" e
    WHERE e."orgId" = ${actor.orgId}::uuid AND e."deletedAt" IS NULL
      AND ${"id" in ref ? Prisma.sql`e.id = ${ref.id}::uuid` : Prisma.sql`e.slug = ${ref.slug}`}
    FOR NO KEY UPDATE OF e`);
  if (!row) throw endpointNotFound(endpoint);
  if (body.replicas < row.minReplicas || body.replicas > row.maxReplicas)
    throw new AppError(
      "UNPROCESSABLE",
      `body.replicas: ${body.replicas} is outside this endpoint's bounds ${row.minReplicas}–${row.maxReplicas}.`,
      { field: "body.replicas", minReplicas: row.minReplicas, maxReplicas: row.maxReplicas },
    );
  const answer: SetDesiredReplicasResult = {
    endpointId: row.id,
    slug: row.slug,
    previousReplicas: row.desiredReplicas,
    desiredReplicas: body.replicas,
  };
  const remember = idempotencyKey
    ? Prisma.sql`
        INSERT INTO "IdempotencyRecord" (id, "orgId", key, "requestHash", status, response)
        VALUES (${uuidV7()}::uuid, ${actor.orgId}::uuid, ${idempotencyKey}, ${requestHash}, 200,
                ${JSON.stringify(answer)}::jsonb)
        ON CONFLICT ("orgId", key) DO NOTHING
        RETURNING 1`
    : null;
  if (row.desiredReplicas === body.replicas) {
    if (remember && (await tx.execute(remember)) === 0) throw new IdempotencyKeyRaced();
    return { answer, deliveryIds: [] };
  }
  const at = new Date();
  const scaleEvent = {
    id: uuidV7(),
    orgId: actor.orgId,
    endpointId: row.id,
    source,
    previousDesired: row.desiredReplicas,
    desired: body.replicas,
    reason: idempotencyKey ? `Idempotency-Key ${idempotencyKey}` : "",
    createdAt: at,
  };
  const deliveries = webhookDeliveryRows(
    [scaledEvent(scaleEvent, row.slug)],
    row.subscriptionIds.map((id) => ({ id, orgId: actor.orgId, eventTypes: [SCALED_EVENT_TYPE] })),
  );
  const [written] = await tx.rows<{ deliveryIds: string[]; remembered: number }>(Prisma.sql`
    WITH scaled AS (
      UPDATE "Endpoint"
      SET "desiredReplicas" = ${body.replicas}, version = version + 1, "updatedAt" = ${at}
      WHERE id = ${row.id}::uuid
    ), event AS (
      INSERT INTO "ScaleEvent" (id, "orgId", "endpointId", source, "previousDesired", desired,
                                reason, "actorType", "actorId", "createdAt", traceparent)
      VALUES (${scaleEvent.id}::uuid, ${actor.orgId}::uuid, ${row.id}::uuid,
              ${source}::"ScaleSource", ${row.desiredReplicas}, ${body.replicas},
              ${scaleEvent.reason}, ${actor.type}::"ActorType", ${actorIdOf(actor)}, ${at},
              ${traceparent})
    ), audit AS (${auditInsertSql(
      actor,
      {
        action: "endpoint.scaled",
        targetType: "endpoint",
        targetId: row.id,
        metadata: { from: row.desiredReplicas, to: body.replicas },
      },
      at,
    )}), deliveries AS (${webhookDeliveriesInsertSql(deliveries, at)}
    )${remember ? Prisma.sql`, remembered AS (${remember})` : Prisma.empty}
    SELECT ARRAY(SELECT id::text FROM deliveries) AS "deliveryIds",
      ${remember ? Prisma.sql`(SELECT count(*)::int FROM remembered)` : Prisma.sql`1`} AS remembered`);
  if (written!.remembered === 0) throw new IdempotencyKeyRaced();
  return { answer, deliveryIds: written!.deliveryIds };
}
