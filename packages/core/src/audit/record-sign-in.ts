import type { Db } from "@thaw/db";

/**
 * A sign-in attempt in the audit log of every org the account belongs to, so an owner sees
 * guessing against their members (an unknown email belongs to no org: nothing to record).
 * `address` is the client's address as the web tier's edge vouches for it.
 */
export async function recordSignIn({
  db,
  email,
  outcome,
  address,
}: {
  db: Db;
  email: string;
  outcome: "signed_in" | "failed" | "rate_limited" | "signed_out";
  address: string;
}): Promise<void> {
  const user = await db.user.findUnique({
    where: { email: email.trim().toLowerCase() },
    select: { id: true, memberships: { select: { orgId: true } } },
  });
  if (!user || user.memberships.length === 0) return;
  await db.auditLog.createMany({
    data: user.memberships.map((m) => ({
      orgId: m.orgId,
      actorType: outcome === "signed_in" || outcome === "signed_out" ? "user" : "system",
      actorId: outcome === "signed_in" || outcome === "signed_out" ? user.id : null,
      action: `auth.${outcome}`,
      targetType: "user",
      targetId: user.id,
      metadata: { address },
    })),
  });
}
