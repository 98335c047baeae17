import type { Db } from "@thaw/db";

/**
 * The rows better-auth's email/password sign-up writes — a user and a "credential" account
 * holding the password hash — for accounts made on someone's behalf (the operator's
 * `org:create`, an accepted invitation). The address is taken as verified: it was given by
 * the operator, or a link sent to it was opened.
 */
export async function createPasswordUser(
  tx: Db,
  o: { email: string; name?: string | undefined; passwordHash: string },
) {
  const userId = crypto.randomUUID();
  return tx.user.create({
    data: {
      id: userId,
      email: o.email,
      name: o.name?.trim() || o.email.split("@")[0]!,
      emailVerified: true,
      accounts: {
        create: {
          id: crypto.randomUUID(),
          accountId: userId,
          providerId: "credential",
          password: o.passwordHash,
        },
      },
    },
  });
}
