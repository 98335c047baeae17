import { recordAudit } from "../audit/index.ts";
import type { DbClient } from "@thaw/db";
import { z } from "zod";
import { actorIdOf, assertCan, type Actor } from "../auth/index.ts";
import { parseInput } from "../errors/index.ts";
import { reconcileSoon, type WithFollowUps } from "../queues/follow-ups.ts";
import { recordWebhookEvents, webhookDeliveryFollowUps } from "../webhooks/record-webhook-event.ts";
import { scaledEvent } from "../webhooks/scaled-event.ts";
import {
  autoscaleFromSignal,
  INITIAL_AUTOSCALER_STATE,
  KPA_DEFAULTS,
  type AutoscalerState,
} from "../scheduling/index.ts";
import { findEndpoint } from "./find-endpoint.ts";

export const LoadSignalBody = z
  .object({
    inFlightRequests: z.number().int().min(0).max(1_000_000),
    queueDepth: z.number().int().min(0).max(1_000_000).default(0),
  })
  .strict();

export const LoadSignalResponse = z
  .object({
    endpointId: z.uuid(),
    slug: z.string(),
    previousReplicas: z.number().int().min(0),
    desiredReplicas: z.number().int().min(0),
    mode: z.enum(["stable", "panic"]),
    reason: z.string(),
  })
  .meta({ id: "LoadSignalDecision" });
export type LoadSignalResponse = z.infer<typeof LoadSignalResponse>;

const StoredState = z.object({
  samples: z.array(z.object({ atSeconds: z.number(), concurrency: z.number() })),
  panicStartedAtSeconds: z.number().nullable(),
  lastPanicTriggerAtSeconds: z.number().nullable(),
  lastActiveAtSeconds: z.number().nullable(),
});

/**
 * A load signal (requests in flight + queued) through the scheduler's autoscaling rule
 * (Knative KPA: stable and panic windows) into the endpoint's desired count. The rule's
 * windows are stored with the endpoint, under its row lock, so concurrent signals and
 * several web processes see one history. A change of desire gets its ScaleEvent, and
 * reconciling the endpoint follows it (only then: an unchanged count asks nothing new).
 */
export async function applyLoadSignal({
  actor,
  endpoint,
  input,
  db,
  now = new Date(),
  traceparent = null,
}: {
  actor: Actor;
  endpoint: string;
  input: unknown;
  db: DbClient;
  now?: Date;
  /** The call's W3C trace context (checked by the transport): the cold starts it causes join its trace. */
  traceparent?: string | null;
}): Promise<WithFollowUps<LoadSignalResponse>> {
  assertCan(actor, "endpoints:scale");
  const body = parseInput(LoadSignalBody, input, "body");
  let deliveryIds: string[] = [];
  const answer = await db.$transaction(async (tx) => {
    const found = await findEndpoint(tx, actor, endpoint);
    await tx.$queryRaw`SELECT id FROM "Endpoint" WHERE id = ${found.id}::uuid FOR NO KEY UPDATE`;
    const row = await tx.endpoint.findUniqueOrThrow({ where: { id: found.id } });
    const stored = StoredState.safeParse(row.autoscalerState);
    const state: AutoscalerState = stored.success ? stored.data : INITIAL_AUTOSCALER_STATE;
    const current = await tx.replica.count({
      where: { endpointId: row.id, state: { in: ["pending", "placed", "starting", "ready"] } },
    });
    const decision = autoscaleFromSignal({
      nowSeconds: now.getTime() / 1000,
      observedConcurrency: body.inFlightRequests + body.queueDepth,
      currentReplicas: current,
      settings: {
        ...KPA_DEFAULTS,
        targetConcurrencyPerReplica: row.targetConcurrency,
        minReplicas: row.minReplicas,
        maxReplicas: row.maxReplicas,
        scaleToZeroIdleSeconds: row.scaleToZeroIdleSeconds,
      },
      state,
    });
    const changed = decision.desiredReplicas !== row.desiredReplicas;
    // The minute's load for the what-if (what-if/): one statement under the row lock already
    // held, so the signal path pays one round trip, and concurrent signals add up exactly.
    const concurrency = body.inFlightRequests + body.queueDepth;
    const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
    await tx.$executeRaw`
      INSERT INTO "LoadSample" ("orgId", "endpointId", minute, "maxConcurrency", "sumConcurrency", signals)
      VALUES (${actor.orgId}::uuid, ${row.id}::uuid, ${minute}, ${concurrency}, ${concurrency}, 1)
      ON CONFLICT ("endpointId", minute) DO UPDATE SET
        "maxConcurrency" = greatest("LoadSample"."maxConcurrency", EXCLUDED."maxConcurrency"),
        "sumConcurrency" = "LoadSample"."sumConcurrency" + EXCLUDED."sumConcurrency",
        signals = "LoadSample".signals + 1`;
    await tx.endpoint.update({
      where: { id: row.id },
      data: {
        autoscalerState: {
          ...decision.state,
          samples: decision.state.samples.map((x) => ({
            atSeconds: x.atSeconds,
            concurrency: x.concurrency,
          })),
        },
        ...(changed && { desiredReplicas: decision.desiredReplicas, version: { increment: 1 } }),
      },
    });
    if (changed) {
      const scaleEvent = await tx.scaleEvent.create({
        data: {
          orgId: actor.orgId,
          endpointId: row.id,
          source: "signal",
          previousDesired: row.desiredReplicas,
          desired: decision.desiredReplicas,
          reason: decision.reason.slice(0, 500),
          actorType: actor.type,
          actorId: actorIdOf(actor),
          traceparent,
        },
      });
      deliveryIds = await recordWebhookEvents(tx, [scaledEvent(scaleEvent, row.slug)]);
    }
    // A signal that changed the desired count is a scale-up or -down like any other: the
    // audit log says which key's signals moved it.
    if (changed)
      await recordAudit(tx, actor, {
        action: "endpoint.scaled_by_signal",
        targetType: "endpoint",
        targetId: row.id,
        metadata: {
          slug: row.slug,
          previousReplicas: row.desiredReplicas,
          desiredReplicas: decision.desiredReplicas,
          mode: decision.mode,
        },
      });
    return {
      endpointId: row.id,
      slug: row.slug,
      previousReplicas: row.desiredReplicas,
      desiredReplicas: decision.desiredReplicas,
      mode: decision.mode,
      reason: decision.reason,
    };
  });
  return {
    result: answer,
    followUps:
      answer.desiredReplicas !== answer.previousReplicas
        ? [reconcileSoon(answer.endpointId), ...webhookDeliveryFollowUps(deliveryIds)]
        : [],
  };
}
