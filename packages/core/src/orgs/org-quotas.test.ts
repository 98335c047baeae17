import { describe, expect, it } from "vitest";
import { DEFAULT_ORG_QUOTAS, effectiveOrgQuotas } from "./org-quotas.ts";

describe("effective org quotas", () => {
  it("takes the org's own where the operator set one, the default elsewhere (0 included)", () => {
    expect(
      effectiveOrgQuotas(DEFAULT_ORG_QUOTAS, {
        maxEndpoints: null,
        maxApiKeys: 0,
        maxReplicasPerEndpoint: 200,
        maxGpus: null,
      }),
    ).toEqual({ ...DEFAULT_ORG_QUOTAS, apiKeys: 0, replicasPerEndpoint: 200 });
  });
});
