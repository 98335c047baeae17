import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { assertMayManageRole } from "./member-rows.ts";
import { RevokeInvitationInput, type RevokedInvitation } from "./member-schemas.ts";

/** Withdraws a pending invitation: its link stops working. */
export async function revokeInvitation({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: unknown;
  db: DbClient;
}): Promise<RevokedInvitation> {
  assertCan(actor, "members:manage");
  const { id } = parseInput(RevokeInvitationInput, input);
  return db.$transaction(async (tx) => {
    const pending = { id, orgId: actor.orgId, acceptedAt: null, revokedAt: null };
    const invitation = await tx.invitation.findFirst({ where: pending, select: { role: true } });
    if (!invitation)
      throw new AppError("NOT_FOUND", "No pending invitation with this id.", { field: "id" });
    assertMayManageRole(actor, invitation.role, "id");
    const { count } = await tx.invitation.updateMany({
      where: pending,
      data: { revokedAt: new Date() },
    });
    if (count === 0)
      throw new AppError("NOT_FOUND", "No pending invitation with this id.", { field: "id" });
    await recordAudit(tx, actor, {
      action: "member.invitation_revoked",
      targetType: "invitation",
      targetId: id,
    });
    return { id };
  });
}
