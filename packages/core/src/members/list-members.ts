import type { Db } from "@thaw/db";
import { type MemberList } from "./member-schemas.ts";
import { assertCan, type Actor } from "../auth/index.ts";

/** The org's members and its pending invitations (owners manage members). */
export async function listMembers({ actor, db }: { actor: Actor; db: Db }): Promise<MemberList> {
  assertCan(actor, "members:manage");
  const [members, invitations] = await Promise.all([
    db.membership.findMany({
      where: { orgId: actor.orgId },
      orderBy: { createdAt: "asc" },
      select: {
        role: true,
        createdAt: true,
        user: { select: { id: true, email: true, name: true } },
      },
    }),
    db.invitation.findMany({
      where: {
        orgId: actor.orgId,
        acceptedAt: null,
        revokedAt: null,
        expiresAt: { gt: new Date() },
      },
      orderBy: { createdAt: "desc" },
      select: { id: true, email: true, role: true, prefix: true, expiresAt: true, createdAt: true },
    }),
  ]);
  return {
    members: members.map((m) => ({
      ...m.user,
      userId: m.user.id,
      role: m.role,
      since: m.createdAt,
    })),
    invitations,
  };
}
