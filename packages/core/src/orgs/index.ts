export { createOrgWithOwner, CreateOrgWithOwnerInput } from "./create-org-with-owner.ts";
export { listUserOrgs } from "./list-user-orgs.ts";
export { resolveUserActor } from "./resolve-user-actor.ts";
export { DEFAULT_ORG_QUOTAS, quotaExceeded, type OrgQuotas } from "./org-quotas.ts";
