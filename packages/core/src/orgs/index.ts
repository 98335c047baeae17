export { createOrgWithOwner, CreateOrgWithOwnerInput } from "./create-org-with-owner.ts";
export { listUserOrgs } from "./list-user-orgs.ts";
export { resolveUserActor } from "./resolve-user-actor.ts";
