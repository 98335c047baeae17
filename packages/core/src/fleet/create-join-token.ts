import type { Db } from "@thaw/db";
import { assertCan, actorIdOf, type Actor } from "../auth/index.ts";
import { issuePrefixedSecret } from "../crypto/secrets.ts";
import { AppError } from "../errors/index.ts";

export const JOIN_TOKEN_KIND = "thawjoin";
const MAX_TTL_SECONDS = 7 * 24 * 3600;

/**
 * Issues a one-time join token for a new node of the actor's org. The secret is returned
 * once; only its hash is kept.
 */
export async function createJoinToken({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: { ttlSeconds: number };
  db: Db;
}): Promise<{ token: string; expiresAt: Date; id: string }> {
  assertCan(actor, "fleet:write");
  if (
    !Number.isInteger(input.ttlSeconds) ||
    input.ttlSeconds < 60 ||
    input.ttlSeconds > MAX_TTL_SECONDS
  ) {
    throw new AppError(
      "BAD_REQUEST",
      `ttlSeconds must be an integer between 60 and ${MAX_TTL_SECONDS}.`,
      { field: "ttlSeconds" },
    );
  }
  const { secret, prefix, hash } = issuePrefixedSecret(JOIN_TOKEN_KIND);
  const expiresAt = new Date(Date.now() + input.ttlSeconds * 1000);
  const row = await db.joinToken.create({
    data: { orgId: actor.orgId, prefix, tokenHash: hash, expiresAt, createdById: actorIdOf(actor) },
  });
  return { token: secret, expiresAt, id: row.id };
}
