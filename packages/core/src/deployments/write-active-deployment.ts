import type { Db } from "@thaw/db";
import type { CompleteDeploymentSpec } from "./complete-deployment-spec.ts";
import { ENGINE_PROFILE_DEFAULTS } from "./deployment-spec.ts";

/**
 * Writes a completed spec (completeDeploymentSpec) as the endpoint's next version and makes it the active one: the
 * previous active version becomes `superseded`. The caller holds the endpoint's row lock.
 */
export async function writeActiveDeployment(
  tx: Db,
  o: { orgId: string; endpointId: string; spec: CompleteDeploymentSpec },
) {
  const { spec } = o;
  const last = await tx.deployment.findFirst({
    where: { endpointId: o.endpointId, orgId: o.orgId },
    orderBy: { version: "desc" },
    select: { version: true },
  });
  await tx.deployment.updateMany({
    where: { endpointId: o.endpointId, orgId: o.orgId, status: { in: ["active", "pending"] } },
    data: { status: "superseded" },
  });
  const row = await tx.deployment.create({
    data: {
      orgId: o.orgId,
      endpointId: o.endpointId,
      version: (last?.version ?? 0) + 1,
      status: "active",
      imageRef: spec.imageRef,
      imageDigest: spec.imageDigest,
      imageBytes: BigInt(spec.imageBytes),
      imageLayers: spec.imageLayers,
      estargzImageRef: spec.estargzImageRef ?? null,
      estargzDigest: spec.estargzImageRef ? (spec.estargzDigest ?? null) : null,
      modelSource: spec.modelSource,
      modelBytes: BigInt(spec.modelBytes),
      modelFormat: spec.modelFormat,
      engine: spec.engine,
      engineArgs: spec.engineArgs,
      engineProfile: {
        ...ENGINE_PROFILE_DEFAULTS[spec.engine],
        ...Object.fromEntries(
          Object.entries(spec.engineProfile ?? {}).filter(([, v]) => v !== undefined),
        ),
      },
    },
  });
  await tx.endpoint.update({
    where: { id: o.endpointId },
    data: { activeDeploymentId: row.id, version: { increment: 1 } },
  });
  return row;
}
