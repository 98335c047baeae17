import { Prisma, type Db, type DbClient } from "@thaw/db";
import { checkEndpointQuotas } from "../orgs/check-endpoint-quotas.ts";
import { DEFAULT_ORG_QUOTAS, type OrgQuotas } from "../orgs/org-quotas.ts";
import { recordAudit } from "../audit/index.ts";
import { actorIdOf, assertCan, orgScope, type Actor } from "../auth/index.ts";
import {
  completeDeploymentSpec,
  type ArtifactInspector,
} from "../deployments/complete-deployment-spec.ts";
import { writeActiveDeployment } from "../deployments/write-active-deployment.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { reconcileSoon, type WithFollowUps } from "../queues/follow-ups.ts";
import { CreateEndpointInput, KNOWN_GPU_MODELS, type EndpointView } from "./endpoint-spec.ts";
import { loadEndpointView } from "./endpoint-view.ts";

/**
 * A GPU model the endpoint can be placed on: one Thaw knows, or one the org's fleet has.
 * Answers the canonical spelling; anything else is BAD_REQUEST naming `field`.
 */
export async function resolveGpuType(
  db: Db,
  actor: Actor,
  gpuType: string,
  field: string,
): Promise<string> {
  const fleet = await db.node.findMany({
    where: { ...orgScope(actor), state: { not: "terminated" } },
    distinct: ["gpuModel"],
    select: { gpuModel: true },
    take: 100,
  });
  const choices = [...new Set([...KNOWN_GPU_MODELS, ...fleet.map((n) => n.gpuModel)])];
  const match = choices.find((c) => c.toLowerCase() === gpuType.toLowerCase());
  if (!match)
    throw new AppError(
      "UNPROCESSABLE",
      `${field}: unknown GPU model '${gpuType.slice(0, 64)}'; use one of ${choices.join(", ")}.`,
      { field, choices },
    );
  return match;
}

/**
 * A new endpoint with its first deployment, active, in one transaction with its audit
 * entry and (when it wants replicas) its ScaleEvent; reconciling it follows.
 */
export async function createEndpoint({
  actor,
  input,
  db,
  source,
  where = "input",
  quotas = DEFAULT_ORG_QUOTAS,
  inspector,
}: {
  actor: Actor;
  input: unknown;
  db: DbClient;
  source: "dashboard" | "api";
  where?: string;
  /** What the org may hold (the operator's THAW_ORG_MAX_*). */
  quotas?: OrgQuotas;
  /** Finds what the deployment leaves out (sizes, digests, the eStargz variant). */
  inspector?: ArtifactInspector;
}): Promise<WithFollowUps<EndpointView>> {
  assertCan(actor, "endpoints:write");
  const spec = parseInput(CreateEndpointInput, input, where);
  const deploymentSpec = await completeDeploymentSpec(spec.deployment, {
    inspector,
    orgId: actor.orgId,
    where: `${where}.deployment`,
  });
  const desired = spec.desiredReplicas ?? spec.minReplicas;
  const slugTaken = () =>
    new AppError("CONFLICT", `${where}.slug: an endpoint '${spec.slug}' already exists.`, {
      field: `${where}.slug`,
    });
  try {
    const created = await db.$transaction(async (tx) => {
      const gpuType = await resolveGpuType(tx, actor, spec.gpuType, `${where}.gpuType`);
      await checkEndpointQuotas(tx, {
        orgId: actor.orgId,
        quotas,
        maxReplicas: spec.maxReplicas,
        gpuCount: spec.gpuCount,
        where,
      });
      if (await tx.endpoint.findFirst({ where: { ...orgScope(actor), slug: spec.slug } }))
        throw slugTaken();
      const endpoint = await tx.endpoint.create({
        data: {
          orgId: actor.orgId,
          slug: spec.slug,
          name: spec.name,
          gpuType,
          gpuCount: spec.gpuCount,
          minReplicas: spec.minReplicas,
          maxReplicas: spec.maxReplicas,
          desiredReplicas: desired,
          scaleToZeroIdleSeconds: spec.scaleToZeroIdleSeconds,
          allowedPaths: spec.allowedPaths,
          objective: spec.objective,
          targetConcurrency: spec.targetConcurrency,
          gpuSecondsPerWaitSecond: spec.gpuSecondsPerWaitSecond ?? null,
        },
      });
      const deployment = await writeActiveDeployment(tx, {
        orgId: actor.orgId,
        endpointId: endpoint.id,
        spec: deploymentSpec,
      });
      if (desired > 0)
        await tx.scaleEvent.create({
          data: {
            orgId: actor.orgId,
            endpointId: endpoint.id,
            source,
            previousDesired: 0,
            desired,
            reason: "endpoint created",
            actorType: actor.type,
            actorId: actorIdOf(actor),
          },
        });
      await recordAudit(tx, actor, {
        action: "endpoint.created",
        targetType: "endpoint",
        targetId: endpoint.id,
        metadata: {
          slug: endpoint.slug,
          gpuType,
          minReplicas: spec.minReplicas,
          maxReplicas: spec.maxReplicas,
          desiredReplicas: desired,
          gpuSecondsPerWaitSecond: spec.gpuSecondsPerWaitSecond ?? null,
          deploymentId: deployment.id,
          imageRef: deployment.imageRef,
          modelSource: deployment.modelSource,
        },
      });
      return loadEndpointView(tx, actor.orgId, endpoint.id);
    });
    return { result: created, followUps: [reconcileSoon(created.id)] };
  } catch (error) {
    // Two creates of one slug at once: the unique index decides, the loser gets a conflict.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002")
      throw slugTaken();
    throw error;
  }
}
