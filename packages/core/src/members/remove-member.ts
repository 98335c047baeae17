import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { assertAnotherOwner } from "./last-owner.ts";
import { RemoveMemberInput } from "./member-schemas.ts";

/**
 * Removes a member from the org: refused from their next request on, their live streams
 * closed at the next re-check. Their account (and other orgs) stay.
 */
export async function removeMember({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: unknown;
  db: DbClient;
}) {
  assertCan(actor, "members:manage");
  const { userId } = parseInput(RemoveMemberInput, input);
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM "Org" WHERE id = ${actor.orgId}::uuid FOR NO KEY UPDATE`;
    const member = await tx.membership.findUnique({
      where: { orgId_userId: { orgId: actor.orgId, userId } },
    });
    if (!member) throw new AppError("NOT_FOUND", "No such member.", { field: "userId" });
    if (member.role === "owner") await assertAnotherOwner(tx, actor.orgId, userId);
    await tx.membership.delete({ where: { id: member.id } });
    await recordAudit(tx, actor, {
      action: "member.removed",
      targetType: "user",
      targetId: userId,
      metadata: { role: member.role },
    });
    return { userId };
  });
}
