export { createOrgWithOwner, CreateOrgWithOwnerInput } from "./create-org-with-owner.ts";
export { describeSession, SessionView } from "./describe-session.ts";
export { listUserOrgs, UserOrg } from "./list-user-orgs.ts";
export { resolveUserActor } from "./resolve-user-actor.ts";
export {
  DEFAULT_ORG_QUOTAS,
  effectiveOrgQuotas,
  ORG_QUOTA_NAMES,
  ORG_QUOTA_SETTINGS,
  quotaExceeded,
  type OrgQuotaOverrides,
  type OrgQuotas,
} from "./org-quotas.ts";
export { getOrgQuotaUsage, OrgQuotaReport, OrgQuotaUsage } from "./get-org-quota-usage.ts";
export { setOrgQuotas, SetOrgQuotasInput } from "./set-org-quotas.ts";
export { MAX_WARM_POOL_GPU_BUDGET, SetOrgSettingsInput, OrgSettings } from "./org-settings-spec.ts";
export { getOrgSettings } from "./get-org-settings.ts";
export { setOrgSettings } from "./set-org-settings.ts";
