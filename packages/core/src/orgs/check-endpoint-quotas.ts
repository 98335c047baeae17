import { Prisma, type DbTransaction } from "@thaw/db";
import { lockOrgQuotas, quotaExceeded, type OrgQuotas } from "./org-quotas.ts";

/**
 * Takes the org's row lock (so two writers cannot both pass a quota), then checks an
 * endpoint that is to exist with `maxReplicas` × `gpuCount` against the org's quotas (its
 * own where the operator set them, else `o.quotas`, the defaults).
 * `replacing` is the endpoint being changed (its current share is not counted twice).
 */
export async function checkEndpointQuotas(
  tx: DbTransaction,
  o: {
    orgId: string;
    quotas: OrgQuotas;
    maxReplicas: number;
    gpuCount: number;
    replacing?: string;
    where: string;
  },
): Promise<void> {
  const { quotas, orgSlug } = await lockOrgQuotas(tx, o.orgId, o.quotas);
  if (o.maxReplicas > quotas.replicasPerEndpoint)
    throw quotaExceeded(
      "replicasPerEndpoint",
      quotas.replicasPerEndpoint,
      o.maxReplicas,
      `${o.where}.maxReplicas`,
      "replicas per endpoint",
      orgSlug,
    );
  const others = Prisma.sql`"orgId" = ${o.orgId}::uuid AND "deletedAt" IS NULL${
    o.replacing ? Prisma.sql` AND id <> ${o.replacing}::uuid` : Prisma.empty
  }`;
  const [row] = await tx.$queryRaw<{ endpoints: bigint; gpus: bigint }[]>`
    SELECT count(*) AS endpoints, COALESCE(sum("maxReplicas" * "gpuCount"), 0) AS gpus
    FROM "Endpoint" WHERE ${others}`;
  const endpoints = Number(row?.endpoints ?? 0) + 1;
  if (!o.replacing && endpoints > quotas.endpoints)
    throw quotaExceeded(
      "endpoints",
      quotas.endpoints,
      endpoints,
      `${o.where}.slug`,
      "live endpoints",
      orgSlug,
    );
  const gpus = Number(row?.gpus ?? 0) + o.maxReplicas * o.gpuCount;
  if (gpus > quotas.gpus)
    throw quotaExceeded(
      "gpus",
      quotas.gpus,
      gpus,
      `${o.where}.maxReplicas`,
      "GPUs over all endpoints at their maxReplicas",
      orgSlug,
    );
}
