import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { assertAnotherOwner } from "./last-owner.ts";
import { ChangeMemberRoleInput } from "./member-schemas.ts";

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
}) {
  assertCan(actor, "members:manage");
  const { userId, role } = parseInput(ChangeMemberRoleInput, input);
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM "Org" WHERE id = ${actor.orgId}::uuid FOR NO KEY UPDATE`;
    const member = await tx.membership.findUnique({
      where: { orgId_userId: { orgId: actor.orgId, userId } },
    });
    if (!member) throw new AppError("NOT_FOUND", "No such member.", { field: "userId" });
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
