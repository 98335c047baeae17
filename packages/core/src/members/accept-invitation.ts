import type { Db, DbClient } from "@thaw/db";
import { parsePrefixedSecret, sha256Hex } from "../crypto/secrets.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { createPasswordUser } from "../orgs/create-password-user.ts";
import { plainText } from "@thaw/protocol";
import { INVITATION_KIND } from "./member-schemas.ts";

const InviteeName = plainText(100);

/** Passwords as the sign-in server requires them (better-auth's minPasswordLength). */
export const MIN_PASSWORD_LENGTH = 10;

const invalid = () =>
  new AppError(
    "NOT_FOUND",
    "This invitation link is invalid, expired, withdrawn or already used: ask for a new one.",
    { field: "token" },
  );

async function pendingInvitation(db: Db, token: string) {
  if (!parsePrefixedSecret(INVITATION_KIND, token)) throw invalid();
  const invitation = await db.invitation.findUnique({
    where: { tokenHash: sha256Hex(token) },
    include: { org: { select: { name: true, slug: true } } },
  });
  if (
    !invitation ||
    invitation.acceptedAt ||
    invitation.revokedAt ||
    invitation.expiresAt <= new Date()
  )
    throw invalid();
  return invitation;
}

/** What an invitation link offers, for the page that accepts it (no secret in the answer). */
export async function describeInvitation({ token, db }: { token: string; db: Db }) {
  const invitation = await pendingInvitation(db, token);
  const account = await db.user.findUnique({
    where: { email: invitation.email },
    select: { id: true },
  });
  return {
    email: invitation.email,
    role: invitation.role,
    orgName: invitation.org.name,
    orgSlug: invitation.org.slug,
    expiresAt: invitation.expiresAt,
    accountExists: account !== null,
  };
}

/**
 * Accepts an invitation. A new address gets an account with the password the invitee chose
 * (`passwordHash`, hashed by the caller as sign-up would); an existing account must be the
 * one signed in (`signedInUserId`) — a link alone never joins someone else's account.
 * The link is spent in the same transaction as the membership.
 */
export async function acceptInvitation({
  token,
  db,
  signedInUserId,
  name,
  passwordHash,
}: {
  token: string;
  db: DbClient;
  signedInUserId: string | null;
  name?: string;
  passwordHash?: () => Promise<string>;
}): Promise<{ orgId: string; orgSlug: string; userId: string; email: string; created: boolean }> {
  // The name is stored and shown to the org (members page, audit): the same rule as any name.
  const displayName =
    name === undefined || name.trim() === "" ? undefined : parseInput(InviteeName, name, "name");
  const invitation = await pendingInvitation(db, token);
  const existing = await db.user.findUnique({ where: { email: invitation.email } });
  if (existing && existing.id !== signedInUserId)
    throw new AppError(
      "CONFLICT",
      `An account ${invitation.email} exists: sign in as it, then open this link again.`,
      { field: "email" },
    );
  if (!existing && !passwordHash)
    throw new AppError("BAD_REQUEST", "Choose a password for the new account.", {
      field: "password",
    });
  const hash = existing ? null : await passwordHash!();
  return db.$transaction(async (tx) => {
    const spent = await tx.invitation.updateMany({
      where: {
        id: invitation.id,
        acceptedAt: null,
        revokedAt: null,
        expiresAt: { gt: new Date() },
      },
      data: { acceptedAt: new Date() },
    });
    if (spent.count !== 1) throw invalid();
    const userId =
      existing?.id ??
      (
        await createPasswordUser(tx, {
          email: invitation.email,
          name: displayName,
          passwordHash: hash!,
        })
      ).id;
    await tx.membership.upsert({
      where: { orgId_userId: { orgId: invitation.orgId, userId } },
      create: { orgId: invitation.orgId, userId, role: invitation.role },
      update: { role: invitation.role },
    });
    await tx.auditLog.create({
      data: {
        orgId: invitation.orgId,
        actorType: "user",
        actorId: userId,
        action: "member.joined",
        targetType: "invitation",
        targetId: invitation.id,
        metadata: { email: invitation.email, role: invitation.role, accountCreated: !existing },
      },
    });
    return {
      orgId: invitation.orgId,
      orgSlug: invitation.org.slug,
      userId,
      email: invitation.email,
      created: !existing,
    };
  });
}
