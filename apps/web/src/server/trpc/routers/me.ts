import { actorCan, listUserOrgs, resolveUserActor } from "@thaw/core";
import { authedProcedure } from "../init.ts";

/** The signed-in user, their orgs, and the org (and role) this session acts in. */
export const meProcedure = authedProcedure.query(async ({ ctx }) => {
  const orgs = await listUserOrgs({ userId: ctx.user.id, db: ctx.db });
  const actor =
    orgs.length > 0
      ? await resolveUserActor({ userId: ctx.user.id, orgSlug: ctx.orgSlug, db: ctx.db })
      : null;
  const org = actor ? (orgs.find((o) => o.id === actor.orgId) ?? null) : null;
  return {
    user: ctx.user,
    orgs,
    org,
    can: {
      createJoinToken: actor ? actorCan(actor, "fleet:write") : false,
      manageApiKeys: actor ? actorCan(actor, "api_keys:manage") : false,
      deployEndpoints: actor ? actorCan(actor, "endpoints:write") : false,
      scaleEndpoints: actor ? actorCan(actor, "endpoints:scale") : false,
      readAudit: actor ? actorCan(actor, "audit:read") : false,
      manageMembers: actor ? actorCan(actor, "members:manage") : false,
      manageOrgSettings: actor ? actorCan(actor, "org_settings:manage") : false,
    },
  };
});
