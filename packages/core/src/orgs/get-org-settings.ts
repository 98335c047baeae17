import type { Db } from "@thaw/db";
import { assertCan, type Actor } from "../auth/index.ts";
import { AppError } from "../errors/index.ts";
import { ORG_SETTINGS_SELECT, toOrgSettings, type OrgSettings } from "./org-settings-spec.ts";

/** The org's default price of waiting and warm-pool GPU budget (its admins' settings card). */
export async function getOrgSettings({
  actor,
  db,
}: {
  actor: Actor;
  db: Db;
}): Promise<OrgSettings> {
  assertCan(actor, "org_settings:manage");
  const row = await db.org.findUnique({ where: { id: actor.orgId }, select: ORG_SETTINGS_SELECT });
  if (!row) throw new AppError("NOT_FOUND", "No such org.");
  return toOrgSettings(row);
}
