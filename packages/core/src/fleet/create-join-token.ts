import type { Db } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, actorIdOf, type Actor } from "../auth/index.ts";
import { issuePrefixedSecret } from "../crypto/secrets.ts";
import { AppError } from "../errors/index.ts";

export const JOIN_TOKEN_KIND = "thawjoin";
const MAX_TTL_SECONDS = 7 * 24 * 3600;

/**
 * Issues a one-time join token for a new node of the actor's org — or, with `nodeId`, for
 * that existing node to join again (its host lost its credential): only such a token, or the
 * node's own credential, lets an instance that already joined join again. The secret is
 * returned once; only its hash is kept.
 */
export async function createJoinToken({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: { ttlSeconds: number; nodeId?: string | undefined };
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
  if (input.nodeId !== undefined) {
    const node = await db.node.findFirst({
      where: { id: input.nodeId, orgId: actor.orgId },
      select: { id: true },
    });
    if (!node) throw new AppError("NOT_FOUND", `No node ${input.nodeId}.`, { field: "nodeId" });
  }
  const { secret, prefix, hash } = issuePrefixedSecret(JOIN_TOKEN_KIND);
  const expiresAt = new Date(Date.now() + input.ttlSeconds * 1000);
  const row = await db.joinToken.create({
    data: {
      orgId: actor.orgId,
      prefix,
      tokenHash: hash,
      expiresAt,
      createdById: actorIdOf(actor),
      nodeId: input.nodeId ?? null,
    },
  });
  await recordAudit(db, actor, {
    action: "join_token.created",
    targetType: "join_token",
    targetId: row.id,
    metadata: { prefix, ttlSeconds: input.ttlSeconds, nodeId: input.nodeId ?? null },
  });
  return { token: secret, expiresAt, id: row.id };
}
