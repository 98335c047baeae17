import type { DbClient } from "@thaw/db";
import { z } from "zod";
import { recordAudit } from "../audit/index.ts";
import { AppError, parseInput } from "../errors/index.ts";

export const CreateOrgWithOwnerInput = z
  .object({
    orgSlug: z
      .string()
      .regex(/^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$/, "1–48 of a-z, 0-9 and '-', not at the ends"),
    orgName: z.string().trim().min(1).max(100),
    email: z.email().max(254),
    name: z.string().trim().min(1).max(100).optional(),
  })
  .strict();

/**
 * The first org and its owner — what an operator runs once on a new installation, since
 * signing up makes a user with no org. Idempotent: an existing org and an existing user
 * (say, one who signed up in the browser) are reused, and the user becomes an owner.
 * A new user needs `passwordHash` (the caller hashes, as better-auth's sign-up would).
 */
export async function createOrgWithOwner({
  input,
  passwordHash,
  db,
}: {
  input: unknown;
  passwordHash?: () => Promise<string>;
  db: DbClient;
}): Promise<{ orgId: string; userId: string; created: string[] }> {
  const { orgSlug, orgName, email, name } = parseInput(CreateOrgWithOwnerInput, input, "input");
  const normalisedEmail = email.toLowerCase();
  const existingUser = await db.user.findUnique({ where: { email: normalisedEmail } });
  if (!existingUser && !passwordHash)
    throw new AppError(
      "BAD_REQUEST",
      `No user ${normalisedEmail} yet: give a password to create one.`,
      { field: "password" },
    );
  const hash = existingUser ? null : await passwordHash!();
  return db.$transaction(async (tx) => {
    const created: string[] = [];
    let org = await tx.org.findUnique({ where: { slug: orgSlug } });
    if (!org) {
      org = await tx.org.create({ data: { slug: orgSlug, name: orgName } });
      created.push(`org ${orgSlug}`);
    }
    let user = await tx.user.findUnique({ where: { email: normalisedEmail } });
    if (!user) {
      // The rows better-auth's email/password sign-up writes: a user and a "credential"
      // account holding the password hash.
      const userId = crypto.randomUUID();
      user = await tx.user.create({
        data: {
          id: userId,
          email: normalisedEmail,
          name: name ?? normalisedEmail.split("@")[0]!,
          emailVerified: true,
          accounts: {
            create: {
              id: crypto.randomUUID(),
              accountId: userId,
              providerId: "credential",
              password: hash!,
            },
          },
        },
      });
      created.push(`user ${normalisedEmail}`);
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
          metadata: { email: normalisedEmail, previousRole: membership?.role ?? null },
        },
      );
      created.push(`owner ${normalisedEmail} of ${orgSlug}`);
    }
    return { orgId: org.id, userId: user.id, created };
  });
}
