import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { actorIdOf, assertCan, type Actor } from "../auth/index.ts";
import { issuePrefixedSecret } from "../crypto/secrets.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { assertMayManageRole } from "./member-rows.ts";
import {
  INVITATION_KIND,
  INVITATION_TTL_DAYS,
  InviteMemberInput,
  type CreatedInvitation,
} from "./member-schemas.ts";

/**
 * Invites an email to the actor's org with a role: a one-time link that expires in
 * INVITATION_TTL_DAYS. The secret is in the answer (the inviter sends the link) and nowhere
 * else; a pending invitation of the same email is replaced.
 */
export async function inviteMember({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: unknown;
  db: DbClient;
}): Promise<CreatedInvitation> {
  assertCan(actor, "members:manage");
  const { email, role } = parseInput(InviteMemberInput, input);
  assertMayManageRole(actor, role, "role");
  const normalised = email.toLowerCase();
  return db.$transaction(async (tx) => {
    const member = await tx.membership.findFirst({
      where: { orgId: actor.orgId, user: { email: normalised } },
    });
    if (member)
      throw new AppError("CONFLICT", `${normalised} is already a member of this org.`, {
        field: "email",
      });
    await tx.invitation.updateMany({
      where: { orgId: actor.orgId, email: normalised, acceptedAt: null, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    const { secret, prefix, hash } = issuePrefixedSecret(INVITATION_KIND);
    const invitation = await tx.invitation.create({
      data: {
        orgId: actor.orgId,
        email: normalised,
        role,
        prefix,
        tokenHash: hash,
        invitedById: actorIdOf(actor),
        expiresAt: new Date(Date.now() + INVITATION_TTL_DAYS * 86_400_000),
      },
    });
    await recordAudit(tx, actor, {
      action: "member.invited",
      targetType: "invitation",
      targetId: invitation.id,
      metadata: { email: normalised, role },
    });
    return {
      id: invitation.id,
      email: normalised,
      role,
      expiresAt: invitation.expiresAt,
      token: secret,
    };
  });
}
