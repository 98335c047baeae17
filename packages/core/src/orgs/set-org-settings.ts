import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import {
  ORG_SETTINGS_SELECT,
  SetOrgSettingsInput,
  toOrgSettings,
  type OrgSettings,
} from "./org-settings-spec.ts";

/**
 * Sets the org's default price of waiting and its warm-pool GPU budget (a number, or null for
 * the default above it), under the org's row lock, audited with what was before and after.
 * The warm pool reads both on its next pass over each endpoint.
 */
export async function setOrgSettings({
  actor,
  input,
  db,
  where = "input",
}: {
  actor: Actor;
  input: unknown;
  db: DbClient;
  where?: string;
}): Promise<OrgSettings> {
  assertCan(actor, "org_settings:manage");
  const changes = parseInput(SetOrgSettingsInput, input, where);
  return db.$transaction(async (tx) => {
    const [locked] = await tx.$queryRaw<{ id: string }[]>`
      SELECT id::text FROM "Org" WHERE id = ${actor.orgId}::uuid FOR NO KEY UPDATE`;
    if (!locked) throw new AppError("NOT_FOUND", "No such org.");
    const before = await tx.org.findUniqueOrThrow({
      where: { id: actor.orgId },
      select: ORG_SETTINGS_SELECT,
    });
    const after = await tx.org.update({
      where: { id: actor.orgId },
      data: changes,
      select: ORG_SETTINGS_SELECT,
    });
    await recordAudit(tx, actor, {
      action: "org.settings_changed",
      targetType: "org",
      targetId: actor.orgId,
      metadata: { before, after },
    });
    return toOrgSettings(after);
  });
}
