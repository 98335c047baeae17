import { directSql, Prisma, type DbClient } from "@thaw/db";
import type { Actor } from "../auth/index.ts";
import { parsePrefixedSecret, sha256Hex } from "../crypto/index.ts";
import { AppError } from "../errors/index.ts";
import { API_KEY_KIND } from "./create-api-key.ts";

/** lastUsedAt is a hint, not a log: written at most this often per key. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Resolves `Authorization: Bearer <key>` to an api_key actor, or UNAUTHENTICATED. */
export async function authenticateApiKey({
  key,
  db,
  now = new Date(),
}: {
  key: string | null;
  db: DbClient;
  now?: Date;
}): Promise<Extract<Actor, { type: "api_key" }>> {
  const refuse = (why: string) =>
    new AppError(
      "UNAUTHENTICATED",
      `${why} Send 'Authorization: Bearer thaw_…' with a key from the dashboard (Settings → API keys).`,
    );
  if (!key) throw refuse("No API key.");
  if (!parsePrefixedSecret(API_KEY_KIND, key)) throw refuse("Malformed API key.");
  // One round trip on every REST call: the key, and its lastUsedAt stamped when it is valid
  // and the stamp is stale. The stamp's condition is on the table's row, so of concurrent
  // calls that all saw a stale stamp the first writes it and the rest (re-checked on the
  // row it wrote) do not.
  const [row] = await directSql(db).rows<{
    id: string;
    orgId: string;
    scopes: string[];
    expiresAt: Date | null;
    revokedAt: Date | null;
  }>(Prisma.sql`
    WITH k AS (
      SELECT id, "orgId", scopes, "expiresAt", "revokedAt" FROM "ApiKey" WHERE hash = ${sha256Hex(key)}
    ), stamped AS (
      UPDATE "ApiKey" a SET "lastUsedAt" = ${now}
      FROM k
      WHERE a.id = k.id AND k."revokedAt" IS NULL AND (k."expiresAt" IS NULL OR k."expiresAt" > ${now})
        AND (a."lastUsedAt" IS NULL OR a."lastUsedAt" < ${new Date(now.getTime() - LAST_USED_RESOLUTION_MS)})
    )
    SELECT id::text, "orgId"::text AS "orgId", scopes, "expiresAt", "revokedAt" FROM k`);
  // Unknown, revoked and expired keys get one answer: telling them apart would confirm to
  // whoever holds a leaked key that it once was real. The dashboard shows the owner which.
  if (!row || row.revokedAt || (row.expiresAt && row.expiresAt <= now))
    throw refuse("Unknown, revoked or expired API key.");
  return { type: "api_key", apiKeyId: row.id, orgId: row.orgId, scopes: row.scopes };
}
