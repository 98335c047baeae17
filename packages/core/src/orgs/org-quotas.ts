import type { DbTransaction } from "@thaw/db";
import { AppError } from "../errors/index.ts";

// What one org may hold, so a leaked key or a runaway autoscaler cannot claim the fleet: the
// operator sets the numbers (the web app's THAW_ORG_MAX_* variables for every org, and
// `thaw admin org quota` for one); use cases check them before they write, and an org past
// one gets a 422 naming the quota and how to raise it.

export interface OrgQuotas {
  /** Live endpoints. */
  endpoints: number;
  /** API keys that are neither revoked nor expired. */
  apiKeys: number;
  /** An endpoint's maxReplicas. */
  replicasPerEndpoint: number;
  /** GPUs the org's endpoints may reach at their maxReplicas: Σ maxReplicas × gpuCount. */
  gpus: number;
}

export const DEFAULT_ORG_QUOTAS: OrgQuotas = {
  endpoints: 500,
  apiKeys: 100,
  replicasPerEndpoint: 64,
  gpus: 256,
};

export const ORG_QUOTA_NAMES = ["endpoints", "apiKeys", "replicasPerEndpoint", "gpus"] as const;

/** Where each quota is set: the default for every org, and one org's own. */
export const ORG_QUOTA_SETTINGS: Record<
  keyof OrgQuotas,
  { env: string; column: keyof OrgQuotaOverrides; flag: string }
> = {
  endpoints: { env: "THAW_ORG_MAX_ENDPOINTS", column: "maxEndpoints", flag: "--endpoints" },
  apiKeys: { env: "THAW_ORG_MAX_API_KEYS", column: "maxApiKeys", flag: "--api-keys" },
  replicasPerEndpoint: {
    env: "THAW_ORG_MAX_REPLICAS_PER_ENDPOINT",
    column: "maxReplicasPerEndpoint",
    flag: "--replicas-per-endpoint",
  },
  gpus: { env: "THAW_ORG_MAX_GPUS", column: "maxGpus", flag: "--gpus" },
};

/** One org's own quotas (Org columns); null: the operator's default applies. */
export interface OrgQuotaOverrides {
  maxEndpoints: number | null;
  maxApiKeys: number | null;
  maxReplicasPerEndpoint: number | null;
  maxGpus: number | null;
}

/** The quotas that hold for an org: its own where the operator set one, else the default. */
export function effectiveOrgQuotas(defaults: OrgQuotas, own: OrgQuotaOverrides): OrgQuotas {
  const quotas = { ...defaults };
  for (const name of ORG_QUOTA_NAMES) {
    const value = own[ORG_QUOTA_SETTINGS[name].column];
    if (value !== null) quotas[name] = value;
  }
  return quotas;
}

/**
 * Takes the org's row lock (two writers cannot both take the last unit of a quota) and
 * returns the quotas that hold for it, with its slug for the refusal's advice.
 */
export async function lockOrgQuotas(
  tx: DbTransaction,
  orgId: string,
  defaults: OrgQuotas,
): Promise<{ quotas: OrgQuotas; orgSlug: string }> {
  const [row] = await tx.$queryRaw<(OrgQuotaOverrides & { slug: string })[]>`
    SELECT slug, "maxEndpoints", "maxApiKeys", "maxReplicasPerEndpoint", "maxGpus"
    FROM "Org" WHERE id = ${orgId}::uuid FOR NO KEY UPDATE`;
  if (!row) throw new AppError("NOT_FOUND", "No such org.");
  return { quotas: effectiveOrgQuotas(defaults, row), orgSlug: row.slug };
}

/** The 422 of a quota: what it is, its limit, what would have been, and who raises it. */
export function quotaExceeded(
  quota: keyof OrgQuotas,
  limit: number,
  wanted: number,
  field: string,
  what: string,
  orgSlug: string,
): AppError {
  const setting = ORG_QUOTA_SETTINGS[quota];
  return new AppError(
    "UNPROCESSABLE",
    `${field}: the org's quota of ${limit} ${what} would be exceeded (${wanted}). Lower it, or ask the operator to raise it: 'thaw admin org quota --org ${orgSlug} ${setting.flag} <n>' for this org, or ${setting.env} for every org.`,
    { field, quota, limit, wanted },
  );
}
