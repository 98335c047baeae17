import type { DbClient } from "@thaw/db";
import { z } from "zod";
import { recordAudit } from "../audit/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { plainText } from "@thaw/protocol";
import { createPasswordUser } from "./create-password-user.ts";

export const CreateOrgWithOwnerInput = z
  .object({
    orgSlug: z
      .string()
      .regex(/^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$/, "1–48 of a-z, 0-9 and '-', not at the ends"),
    orgName: plainText(100),
    email: z.email().max(254),
    name: plainText(100).optional(),
  })
  .strict();

/**
 * The first org and its owner — what an operator runs once on a new installation.
 * Idempotent: an existing org is reused, and an owner it already has stays as they are.
 * A user who exists but is not yet this org's owner is refused unless `resetPassword`: such
 * an account may have been registered by someone else before the operator came (account
 * pre-hijack), so keeping its password would hand the org to them. With `resetPassword` the
 * account gets the operator's password, every session it had ends, and it becomes owner.
 * The caller hashes the password (as better-auth's sign-up would).
 */
export async function createOrgWithOwner({
  input,
  passwordHash,
  resetPassword = false,
  db,
}: {
  input: unknown;
  passwordHash?: () => Promise<string>;
  resetPassword?: boolean;
  db: DbClient;
}): Promise<{ orgId: string; userId: string; created: string[] }> {
  const { orgSlug, orgName, email, name } = parseInput(CreateOrgWithOwnerInput, input, "input");
  const normalisedEmail = email.toLowerCase();
  const existingUser = await db.user.findUnique({ where: { email: normalisedEmail } });
  const alreadyOwner =
    existingUser &&
    (await db.membership.findFirst({
      where: { userId: existingUser.id, role: "owner", org: { slug: orgSlug } },
    }));
  if (existingUser && !alreadyOwner && !resetPassword)
    throw new AppError(
      "CONFLICT",
      `A user ${normalisedEmail} already exists and is not an owner of '${orgSlug}'. Someone else may have registered that address: run again with --reset-password to give the account your password (its sessions end) and make it owner.`,
      { field: "email" },
    );
  const needsHash = !existingUser || (resetPassword && !alreadyOwner);
  if (needsHash && !passwordHash)
    throw new AppError("BAD_REQUEST", `Give a password for ${normalisedEmail}.`, {
      field: "password",
    });
  const hash = needsHash ? await passwordHash!() : null;
  return db.$transaction(async (tx) => {
    const created: string[] = [];
    let org = await tx.org.findUnique({ where: { slug: orgSlug } });
    if (!org) {
      org = await tx.org.create({ data: { slug: orgSlug, name: orgName } });
      created.push(`org ${orgSlug}`);
    }
    let user = await tx.user.findUnique({ where: { email: normalisedEmail } });
    if (!user) {
      user = await createPasswordUser(tx, { email: normalisedEmail, name, passwordHash: hash! });
      created.push(`user ${normalisedEmail}`);
    } else if (hash) {
      // --reset-password: the operator's password replaces whatever the account had, and
      // whoever held its sessions is signed out.
      const credential = await tx.account.findFirst({
        where: { userId: user.id, providerId: "credential" },
      });
      if (credential)
        await tx.account.update({ where: { id: credential.id }, data: { password: hash } });
      else
        await tx.account.create({
          data: {
            id: crypto.randomUUID(),
            userId: user.id,
            accountId: user.id,
            providerId: "credential",
            password: hash,
          },
        });
      const ended = await tx.session.deleteMany({ where: { userId: user.id } });
      created.push(`password of ${normalisedEmail} reset (${ended.count} sessions ended)`);
    }
    const membership = await tx.membership.findUnique({
      where: { orgId_userId: { orgId: org.id, userId: user.id } },
    });
    if (membership?.role !== "owner") {
      await tx.membership.upsert({
        where: { orgId_userId: { orgId: org.id, userId: user.id } },
        create: { orgId: org.id, userId: user.id, role: "owner" },
        update: { role: "owner" },
      });
      await recordAudit(
        tx,
        { type: "system", orgId: org.id },
        {
          action: "member.owner_added",
          targetType: "user",
          targetId: user.id,
          metadata: {
            email: normalisedEmail,
            previousRole: membership?.role ?? null,
            passwordReset: hash !== null && existingUser !== null,
          },
        },
      );
      created.push(`owner ${normalisedEmail} of ${orgSlug}`);
    }
    return { orgId: org.id, userId: user.id, created };
  });
}
