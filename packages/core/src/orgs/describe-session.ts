import type { Db } from "@thaw/db";
import { z } from "zod";
import { actorCan } from "../auth/index.ts";
import { listUserOrgs, UserOrg } from "./list-user-orgs.ts";
import { resolveUserActor } from "./resolve-user-actor.ts";

/** The signed-in user as the dashboard's shell needs them: who, in which org, allowed what. */
export const SessionView = z.object({
  user: z.object({ id: z.string(), email: z.string(), name: z.string() }),
  orgs: z.array(UserOrg),
  /** The org this session acts in (the one asked for, else the first); null with none. */
  org: UserOrg.nullable(),
  /** Which of the dashboard's controls the user's role in that org may use. */
  can: z.object({
    createJoinToken: z.boolean(),
    manageApiKeys: z.boolean(),
    deployEndpoints: z.boolean(),
    scaleEndpoints: z.boolean(),
    readAudit: z.boolean(),
    manageMembers: z.boolean(),
    /** Grant, change or remove the owner role (owners only; admins manage up to admin). */
    manageOwners: z.boolean(),
    manageOrgSettings: z.boolean(),
    manageRegistries: z.boolean(),
    manageWebhooks: z.boolean(),
    manageAlerts: z.boolean(),
  }),
});
export type SessionView = z.infer<typeof SessionView>;

/**
 * The signed-in user, their orgs, and the org (and role) this session acts in. A user of no
 * org yet has no org and may do nothing; an org they are not a member of is NOT_FOUND.
 */
export async function describeSession({
  user,
  orgSlug,
  db,
}: {
  user: SessionView["user"];
  orgSlug: string | undefined;
  db: Db;
}): Promise<SessionView> {
  const orgs = await listUserOrgs({ userId: user.id, db });
  const actor = orgs.length > 0 ? await resolveUserActor({ userId: user.id, orgSlug, db }) : null;
  const org = actor ? (orgs.find((o) => o.id === actor.orgId) ?? null) : null;
  return {
    user,
    orgs,
    org,
    can: {
      createJoinToken: actor ? actorCan(actor, "fleet:write") : false,
      manageApiKeys: actor ? actorCan(actor, "api_keys:manage") : false,
      deployEndpoints: actor ? actorCan(actor, "endpoints:write") : false,
      scaleEndpoints: actor ? actorCan(actor, "endpoints:scale") : false,
      readAudit: actor ? actorCan(actor, "audit:read") : false,
      manageMembers: actor ? actorCan(actor, "members:manage") : false,
      manageOwners: actor ? actorCan(actor, "members:manage_owners") : false,
      manageOrgSettings: actor ? actorCan(actor, "org_settings:manage") : false,
      manageRegistries: actor ? actorCan(actor, "registries:manage") : false,
      manageWebhooks: actor ? actorCan(actor, "webhooks:manage") : false,
      manageAlerts: actor ? actorCan(actor, "alerts:manage") : false,
    },
  };
}
