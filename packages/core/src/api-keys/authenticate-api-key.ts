import type { Db } from "@thaw/db";
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
  db: Db;
  now?: Date;
}): Promise<Extract<Actor, { type: "api_key" }>> {
  const refuse = (why: string) =>
    new AppError(
      "UNAUTHENTICATED",
      `${why} Send 'Authorization: Bearer thaw_…' with a key from the dashboard (Settings → API keys).`,
    );
  if (!key) throw refuse("No API key.");
  if (!parsePrefixedSecret(API_KEY_KIND, key)) throw refuse("Malformed API key.");
  const row = await db.apiKey.findUnique({
    where: { hash: sha256Hex(key) },
    select: {
      id: true,
      orgId: true,
      scopes: true,
      expiresAt: true,
      revokedAt: true,
      lastUsedAt: true,
    },
  });
  // Unknown, revoked and expired keys get one answer: telling them apart would confirm to
  // whoever holds a leaked key that it once was real. The dashboard shows the owner which.
  if (!row || row.revokedAt || (row.expiresAt && row.expiresAt <= now))
    throw refuse("Unknown, revoked or expired API key.");
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS)
    await db.apiKey.update({ where: { id: row.id }, data: { lastUsedAt: now } });
  return { type: "api_key", apiKeyId: row.id, orgId: row.orgId, scopes: row.scopes };
}
