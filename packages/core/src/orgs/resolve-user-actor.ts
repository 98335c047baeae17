import type { Db } from "@thaw/db";
import type { Actor } from "../auth/index.ts";
import { AppError } from "../errors/index.ts";

/**
 * Turns a signed-in user into an actor for one org: the org named by slug, or the user's
 * first membership. A user who is not a member of the org gets NOT_FOUND, as if it did not exist.
 */
export async function resolveUserActor({
  userId,
  orgSlug,
  db,
}: {
  userId: string;
  orgSlug?: string | undefined;
  db: Db;
}): Promise<Extract<Actor, { type: "user" }>> {
  const membership = await db.membership.findFirst({
    where: { userId, ...(orgSlug ? { org: { slug: orgSlug } } : {}) },
    orderBy: { createdAt: "asc" },
    select: { orgId: true, role: true },
  });
  if (!membership)
    throw new AppError(
      "NOT_FOUND",
      orgSlug
        ? `Organisation '${orgSlug}' not found.`
        : "You are not a member of any organisation yet.",
    );
  return { type: "user", userId, orgId: membership.orgId, role: membership.role };
}
