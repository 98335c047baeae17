import type { OrgQuotas } from "@thaw/core";
import { env } from "../env.ts";

/** The org quotas the operator set (THAW_ORG_MAX_*), for the use cases that check them. */
export function orgQuotas(): OrgQuotas {
  const e = env();
  return {
    endpoints: e.THAW_ORG_MAX_ENDPOINTS,
    apiKeys: e.THAW_ORG_MAX_API_KEYS,
    replicasPerEndpoint: e.THAW_ORG_MAX_REPLICAS_PER_ENDPOINT,
    gpus: e.THAW_ORG_MAX_GPUS,
  };
}
