import type { DbClient } from "@thaw/db";
import { z } from "zod";
import { assertCan, type Actor } from "../auth/index.ts";
import {
  effectiveOrgQuotas,
  ORG_QUOTA_NAMES,
  ORG_QUOTA_SETTINGS,
  type OrgQuotas,
} from "./org-quotas.ts";

export const OrgQuotaUsage = z.object({
  name: z.enum(ORG_QUOTA_NAMES),
  limit: z.number(),
  /** What the org holds against it now (for replicasPerEndpoint: its largest maxReplicas). */
  used: z.number(),
  /** Whether the limit is the org's own (set by the operator) or the default for every org. */
  source: z.enum(["org", "default"]),
  /** How the operator raises it. */
  raiseWith: z.string(),
});
export type OrgQuotaUsage = z.infer<typeof OrgQuotaUsage>;

/** Every quota of the org beside its use, and its spend cap. */
export const OrgQuotaReport = z.object({
  quotas: z.array(OrgQuotaUsage),
  spendCapUsdPerHour: z.number().nullable(),
});
export type OrgQuotaReport = z.infer<typeof OrgQuotaReport>;

/**
 * The org's quotas beside what it holds, for the dashboard: every member sees where the
 * ceiling is before a write hits it.
 */
export async function getOrgQuotaUsage({
  actor,
  db,
  defaults,
}: {
  actor: Actor;
  db: DbClient;
  defaults: OrgQuotas;
}): Promise<OrgQuotaReport> {
  assertCan(actor, "endpoints:read");
  const now = new Date();
  const [org, endpoints, apiKeys] = await Promise.all([
    db.org.findUniqueOrThrow({
      where: { id: actor.orgId },
      select: {
        slug: true,
        maxEndpoints: true,
        maxApiKeys: true,
        maxReplicasPerEndpoint: true,
        maxGpus: true,
        spendCapUsdPerHour: true,
      },
    }),
    db.endpoint.findMany({
      where: { orgId: actor.orgId, deletedAt: null },
      select: { maxReplicas: true, gpuCount: true },
    }),
    db.apiKey.count({
      where: {
        orgId: actor.orgId,
        revokedAt: null,
        OR: [{ expiresAt: null }, { expiresAt: { gt: now } }],
      },
    }),
  ]);
  const limits = effectiveOrgQuotas(defaults, org);
  const used: OrgQuotas = {
    endpoints: endpoints.length,
    apiKeys,
    replicasPerEndpoint: Math.max(0, ...endpoints.map((e) => e.maxReplicas)),
    gpus: endpoints.reduce((n, e) => n + e.maxReplicas * e.gpuCount, 0),
  };
  return {
    quotas: ORG_QUOTA_NAMES.map((name) => {
      const setting = ORG_QUOTA_SETTINGS[name];
      return {
        name,
        limit: limits[name],
        used: used[name],
        source: org[setting.column] === null ? "default" : "org",
        raiseWith: `thaw admin org quota --org ${org.slug} ${setting.flag} <n>`,
      };
    }),
    spendCapUsdPerHour: org.spendCapUsdPerHour,
  };
}
