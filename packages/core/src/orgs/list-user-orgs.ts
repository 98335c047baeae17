import type { Db } from "@thaw/db";

/** The orgs a user belongs to, with their role, for the org switcher. */
export async function listUserOrgs({ userId, db }: { userId: string; db: Db }) {
  const rows = await db.membership.findMany({
    where: { userId },
    orderBy: { createdAt: "asc" },
    include: { org: { select: { id: true, slug: true, name: true } } },
  });
  return rows.map((m) => ({ ...m.org, role: m.role }));
}
