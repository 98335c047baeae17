import type { Db } from "@thaw/db";
import { z } from "zod";
import { OrgRole } from "../vocabulary/index.ts";

/** An org the user belongs to, and their role in it. */
export const UserOrg = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  role: OrgRole,
});
export type UserOrg = z.infer<typeof UserOrg>;

/** The orgs a user belongs to, with their role, for the org switcher. */
export async function listUserOrgs({ userId, db }: { userId: string; db: Db }): Promise<UserOrg[]> {
  const rows = await db.membership.findMany({
    where: { userId },
    orderBy: { createdAt: "asc" },
    include: { org: { select: { id: true, slug: true, name: true } } },
  });
  return rows.map((m) => ({ ...m.org, role: m.role }));
}
