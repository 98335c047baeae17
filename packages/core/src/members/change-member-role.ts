import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { parseInput } from "../errors/index.ts";
import { assertAnotherOwner, assertMayManageRole, findMember } from "./member-rows.ts";
import { ChangeMemberRoleInput, type ChangedMemberRole } from "./member-schemas.ts";

/**
 * Gives a member another role; it holds from their next request (every request resolves the
 * role from here), and their live streams re-check within THAW_LIVE_RECHECK_SECONDS.
 */
export async function changeMemberRole({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: unknown;
  db: DbClient;
}): Promise<ChangedMemberRole> {
  assertCan(actor, "members:manage");
  const { userId, role } = parseInput(ChangeMemberRoleInput, input);
  assertMayManageRole(actor, role, "role");
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM "Org" WHERE id = ${actor.orgId}::uuid FOR NO KEY UPDATE`;
    const member = await findMember(tx, actor.orgId, userId);
    assertMayManageRole(actor, member.role, "userId");
    if (member.role === "owner" && role !== "owner")
      await assertAnotherOwner(tx, actor.orgId, userId);
    await tx.membership.update({ where: { id: member.id }, data: { role } });
    await recordAudit(tx, actor, {
      action: "member.role_changed",
      targetType: "user",
      targetId: userId,
      metadata: { from: member.role, to: role },
    });
    return { userId, role };
  });
}
