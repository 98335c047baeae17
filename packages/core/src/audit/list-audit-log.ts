import type { Db } from "@thaw/db";
import { z } from "zod";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { parseInput } from "../errors/index.ts";
import { ActorType } from "../vocabulary/index.ts";

export const ListAuditLogInput = z
  .object({
    /** Entries older than this entry (its id): the next page. Named as tRPC's infinite queries expect. */
    cursor: z.uuid().nullish(),
    /** e.g. "endpoint." for every endpoint action. */
    actionPrefix: z
      .string()
      .max(64)
      .regex(/^[a-z_.]*$/, "lower-case letters, '_' and '.' only")
      .optional(),
    limit: z.number().int().min(1).max(200).default(50),
  })
  .strict();

export const AuditLogPage = z.object({
  entries: z.array(
    z.object({
      id: z.string(),
      createdAt: z.date(),
      action: z.string(),
      actorType: ActorType,
      /** A user's email, an API key's name and prefix; the id or the actor type otherwise. */
      actorName: z.string(),
      targetType: z.string(),
      targetId: z.string().nullable(),
      metadata: z.record(z.string(), z.unknown()),
    }),
  ),
  /** The last entry's id when there are older entries (the next page's cursor). */
  nextCursor: z.string().nullable(),
});
export type AuditLogPage = z.infer<typeof AuditLogPage>;

/**
 * The org's audit log, newest first, one page at a time, with who did it by name (a user's
 * email, an API key's name and prefix) so that a reader need not look ids up.
 */
export async function listAuditLog({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: unknown;
  db: Db;
}): Promise<AuditLogPage> {
  assertCan(actor, "audit:read");
  const { cursor, actionPrefix, limit } = parseInput(ListAuditLogInput, input ?? {});
  // UUIDv7 ids are time-ordered: "below this id" is "older than this entry".
  const rows = await db.auditLog.findMany({
    where: {
      ...orgScope(actor),
      ...(cursor ? { id: { lt: cursor } } : {}),
      ...(actionPrefix ? { action: { startsWith: actionPrefix } } : {}),
    },
    orderBy: { id: "desc" },
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  const ids = (type: string) => [
    ...new Set(page.filter((r) => r.actorType === type && r.actorId).map((r) => r.actorId!)),
  ];
  const [users, keys] = await Promise.all([
    db.user.findMany({
      // Only members of this org: an id in another org's log never resolves here.
      where: { id: { in: ids("user") }, memberships: { some: orgScope(actor) } },
      select: { id: true, email: true },
    }),
    db.apiKey.findMany({
      where: { id: { in: ids("api_key") }, ...orgScope(actor) },
      select: { id: true, name: true, prefix: true },
    }),
  ]);
  const names = new Map<string, string>([
    ...users.map((u) => [u.id, u.email] as const),
    ...keys.map((k) => [k.id, `API key ${k.name} (thaw_${k.prefix})`] as const),
  ]);
  return {
    entries: page.map((r) => ({
      id: r.id,
      createdAt: r.createdAt,
      action: r.action,
      actorType: r.actorType,
      actorName: r.actorId ? (names.get(r.actorId) ?? r.actorId) : r.actorType,
      targetType: r.targetType,
      targetId: r.targetId,
      metadata: r.metadata as Record<string, unknown>,
    })),
    nextCursor: rows.length > limit ? (page.at(-1)?.id ?? null) : null,
  };
}
