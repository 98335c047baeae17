import type { Db } from "@thaw/db";
import { actorCan, type Actor } from "../auth/index.ts";
import { AppError } from "../errors/index.ts";
import type { OrgRole } from "../vocabulary/index.ts";

/**
 * Refuses an admin what only owners may do: invite an owner, make someone owner, or change,
 * remove or uninvite an owner (an admin could otherwise take the org from its owners).
 */
export function assertMayManageRole(actor: Actor, role: OrgRole, field: string): void {
  if (role === "owner" && !actorCan(actor, "members:manage_owners"))
    throw new AppError("FORBIDDEN", "Only an owner can grant, change or remove the owner role.", {
      field,
    });
}

/** Refuses to leave an org without an owner (nobody could manage its members again). */
export async function assertAnotherOwner(tx: Db, orgId: string, userId: string): Promise<void> {
  const others = await tx.membership.count({
    where: { orgId, role: "owner", userId: { not: userId } },
  });
  if (others === 0)
    throw new AppError(
      "CONFLICT",
      "This is the org's last owner: make another member owner first.",
      { field: "userId" },
    );
}

/** The org's membership of a user, or NOT_FOUND naming userId. */
export async function findMember(tx: Db, orgId: string, userId: string) {
  const member = await tx.membership.findUnique({ where: { orgId_userId: { orgId, userId } } });
  if (!member) throw new AppError("NOT_FOUND", "No such member.", { field: "userId" });
  return member;
}
