import { AppError } from "../errors/index.ts";

// What one org may hold, so a leaked key or a runaway autoscaler cannot claim the fleet: the
// operator sets the numbers (the web app's THAW_ORG_MAX_* variables); use cases check them
// before they write, and an org past one gets a 422 naming the quota and how to raise it.

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

const ENV_NAME: Record<keyof OrgQuotas, string> = {
  endpoints: "THAW_ORG_MAX_ENDPOINTS",
  apiKeys: "THAW_ORG_MAX_API_KEYS",
  replicasPerEndpoint: "THAW_ORG_MAX_REPLICAS_PER_ENDPOINT",
  gpus: "THAW_ORG_MAX_GPUS",
};

/** The 422 of a quota: what it is, its limit, what would have been, and who raises it. */
export function quotaExceeded(
  quota: keyof OrgQuotas,
  limit: number,
  wanted: number,
  field: string,
  what: string,
): AppError {
  return new AppError(
    "UNPROCESSABLE",
    `${field}: the org's quota of ${limit} ${what} would be exceeded (${wanted}). Lower it, or ask the operator to raise ${ENV_NAME[quota]}.`,
    { field, quota, limit, wanted },
  );
}
