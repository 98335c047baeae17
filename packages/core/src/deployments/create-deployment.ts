import type { DbClient } from "@thaw/db";
import { z } from "zod";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { EndpointRef, findEndpoint } from "../endpoints/find-endpoint.ts";
import { parseInput } from "../errors/index.ts";
import { reconcileSoon, type WithFollowUps } from "../queues/follow-ups.ts";
import { recordWebhookEvents, webhookDeliveryFollowUps } from "../webhooks/record-webhook-event.ts";
import { completeDeploymentSpec, type ArtifactInspector } from "./complete-deployment-spec.ts";
import { toDeploymentView } from "./deployment-record.ts";
import { DeploymentSpec, type DeploymentView } from "./deployment-spec.ts";
import { writeActiveDeployment } from "./write-active-deployment.ts";

/** The dashboard's call: which endpoint, and the deployment to roll it to. */
export const CreateDeploymentRequest = z
  .object({ endpoint: EndpointRef, deployment: DeploymentSpec })
  .strict();

/**
 * Rolls an endpoint to a new immutable version: written as the next version, made active,
 * the previous one `superseded`, with an audit entry, under the endpoint's row lock.
 * Reconciling the endpoint follows, which replaces the replicas of older versions.
 */
export async function createDeployment({
  actor,
  endpoint,
  input,
  db,
  where = "input",
  inspector,
}: {
  actor: Actor;
  endpoint: unknown;
  input: unknown;
  db: DbClient;
  where?: string;
  /** Finds what the spec leaves out (sizes, digests, the eStargz variant). */
  inspector?: ArtifactInspector;
}): Promise<WithFollowUps<DeploymentView>> {
  assertCan(actor, "deployments:write");
  const parsed = parseInput(DeploymentSpec, input, where);
  // The endpoint is looked up first so that another org's slug is a 404 before any registry is asked.
  await findEndpoint(db, actor, endpoint);
  const spec = await completeDeploymentSpec(parsed, { inspector, orgId: actor.orgId, where });
  let deliveryIds: string[] = [];
  const deployment = await db.$transaction(async (tx) => {
    const found = await findEndpoint(tx, actor, endpoint);
    await tx.$queryRaw`SELECT id FROM "Endpoint" WHERE id = ${found.id}::uuid FOR UPDATE`;
    const previous = found.activeDeploymentId;
    const row = await writeActiveDeployment(tx, {
      orgId: actor.orgId,
      endpointId: found.id,
      spec,
    });
    await recordAudit(tx, actor, {
      action: "deployment.created",
      targetType: "deployment",
      targetId: row.id,
      metadata: {
        endpointId: found.id,
        slug: found.slug,
        version: row.version,
        supersedes: previous,
        imageRef: row.imageRef,
        imageDigest: row.imageDigest,
        modelSource: row.modelSource,
      },
    });
    deliveryIds = await recordWebhookEvents(tx, [
      {
        orgId: actor.orgId,
        type: "deployment.rolled",
        key: row.id,
        data: {
          endpointId: found.id,
          endpointSlug: found.slug,
          deploymentId: row.id,
          version: row.version,
          previousDeploymentId: previous,
          imageRef: row.imageRef,
          imageDigest: row.imageDigest,
          modelSource: row.modelSource,
        },
      },
    ]);
    return toDeploymentView(row);
  });
  return {
    result: deployment,
    followUps: [reconcileSoon(deployment.endpointId), ...webhookDeliveryFollowUps(deliveryIds)],
  };
}
