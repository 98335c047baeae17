import type { DbClient } from "@thaw/db";
import { z } from "zod";
import { checkEndpointQuotas } from "../orgs/check-endpoint-quotas.ts";
import { DEFAULT_ORG_QUOTAS, type OrgQuotas } from "../orgs/org-quotas.ts";
import { recordAudit } from "../audit/index.ts";
import { actorIdOf, assertCan, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { reconcileSoon, type WithFollowUps } from "../queues/follow-ups.ts";
import { recordWebhookEvents, webhookDeliveryFollowUps } from "../webhooks/record-webhook-event.ts";
import { scaledEvent } from "../webhooks/scaled-event.ts";
import {
  clampDesired,
  scalingBoundsProblem,
  UpdateEndpointInput,
  type EndpointView,
} from "./endpoint-spec.ts";
import { loadEndpointView } from "./endpoint-view.ts";
import { EndpointRef, findEndpoint } from "./find-endpoint.ts";

/** The dashboard's call: which endpoint, and the changes (REST sends them as the body). */
export const UpdateEndpointRequest = z
  .object({ endpoint: EndpointRef, changes: UpdateEndpointInput })
  .strict();

/**
 * Changes an endpoint's name, scaling bounds (min ≤ max; the desired count is moved into
 * them), start paths, objective, target concurrency, scale-to-zero delay or price of waiting
 * (null: back to the org's default), under its row
 * lock, with a version bump and an audit entry; reconciling it follows.
 */
export async function updateEndpoint({
  actor,
  endpoint,
  input,
  db,
  source,
  where = "input",
  quotas = DEFAULT_ORG_QUOTAS,
}: {
  actor: Actor;
  endpoint: unknown;
  input: unknown;
  db: DbClient;
  source: "dashboard" | "api";
  where?: string;
  /** What the org may hold (the operator's THAW_ORG_MAX_*). */
  quotas?: OrgQuotas;
}): Promise<WithFollowUps<EndpointView>> {
  assertCan(actor, "endpoints:write");
  const changes = parseInput(UpdateEndpointInput, input, where);
  let deliveryIds: string[] = [];
  const updated = await db.$transaction(async (tx) => {
    const found = await findEndpoint(tx, actor, endpoint);
    await tx.$queryRaw`SELECT id FROM "Endpoint" WHERE id = ${found.id}::uuid FOR UPDATE`;
    const row = await tx.endpoint.findUniqueOrThrow({ where: { id: found.id } });
    const minReplicas = changes.minReplicas ?? row.minReplicas;
    const maxReplicas = changes.maxReplicas ?? row.maxReplicas;
    const problem = scalingBoundsProblem({ minReplicas, maxReplicas });
    if (problem) {
      // Blame the bound the request changed.
      const field = changes.minReplicas !== undefined ? "minReplicas" : "maxReplicas";
      throw new AppError("UNPROCESSABLE", `${where}.${field}: ${problem.message}.`, {
        field: `${where}.${field}`,
      });
    }
    if (changes.maxReplicas !== undefined && changes.maxReplicas > row.maxReplicas)
      await checkEndpointQuotas(tx, {
        orgId: actor.orgId,
        quotas,
        maxReplicas,
        gpuCount: row.gpuCount,
        replacing: row.id,
        where,
      });
    const desiredReplicas = clampDesired(row.desiredReplicas, minReplicas, maxReplicas);
    await tx.endpoint.update({
      where: { id: row.id },
      data: {
        ...changes,
        desiredReplicas,
        version: { increment: 1 },
      },
    });
    if (desiredReplicas !== row.desiredReplicas) {
      const scaleEvent = await tx.scaleEvent.create({
        data: {
          orgId: actor.orgId,
          endpointId: row.id,
          source,
          previousDesired: row.desiredReplicas,
          desired: desiredReplicas,
          reason: `bounds changed to ${minReplicas}–${maxReplicas}`,
          actorType: actor.type,
          actorId: actorIdOf(actor),
        },
      });
      deliveryIds = await recordWebhookEvents(tx, [scaledEvent(scaleEvent, row.slug)]);
    }
    const before = Object.fromEntries(
      Object.keys(changes).map((k) => [k, row[k as keyof typeof row] as unknown]),
    );
    await recordAudit(tx, actor, {
      action: "endpoint.updated",
      targetType: "endpoint",
      targetId: row.id,
      metadata: {
        slug: row.slug,
        before,
        after: changes,
        desiredReplicas: { from: row.desiredReplicas, to: desiredReplicas },
      },
    });
    return loadEndpointView(tx, actor.orgId, row.id);
  });
  return {
    result: updated,
    followUps: [reconcileSoon(updated.id), ...webhookDeliveryFollowUps(deliveryIds)],
  };
}
