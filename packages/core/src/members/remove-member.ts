import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { parseInput } from "../errors/index.ts";
import { assertAnotherOwner, assertMayManageRole, findMember } from "./member-rows.ts";
import { RemoveMemberInput, type RemovedMember } from "./member-schemas.ts";

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
}): Promise<RemovedMember> {
  assertCan(actor, "members:manage");
  const { userId } = parseInput(RemoveMemberInput, input);
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM "Org" WHERE id = ${actor.orgId}::uuid FOR NO KEY UPDATE`;
    const member = await findMember(tx, actor.orgId, userId);
    assertMayManageRole(actor, member.role, "userId");
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
