import type { Db } from "@thaw/db";
import { z } from "zod";
import { recordAudit } from "../audit/index.ts";
import { assertCan, actorIdOf, type Actor } from "../auth/index.ts";
import { issuePrefixedSecret } from "../crypto/secrets.ts";
import { AppError, parseInput } from "../errors/index.ts";

export const JOIN_TOKEN_KIND = "thawjoin";

export const CreateJoinTokenInput = z
  .object({
    /** How long the token may be used: a minute to a week, an hour unless said. */
    ttlSeconds: z
      .number()
      .int()
      .min(60)
      .max(7 * 24 * 3600)
      .default(3600),
    /** A token for this node's host to join again (it lost its credential, or was revoked). */
    nodeId: z.uuid({ message: "expected a node id (UUID)" }).optional(),
  })
  .strict();

/** A new join token: the secret is here once and only its hash is kept. */
export const CreatedJoinToken = z.object({
  token: z.string(),
  expiresAt: z.date(),
  id: z.string(),
});
export type CreatedJoinToken = z.infer<typeof CreatedJoinToken>;

/**
 * Issues a one-time join token for a new node of the actor's org — or, with `nodeId`, for
 * that existing node to join again (its host lost its credential): only such a token, or the
 * node's own credential, lets an instance that already joined join again. The secret is
 * returned once; only its hash is kept.
 */
export async function createJoinToken({
  actor,
  input: raw,
  db,
}: {
  actor: Actor;
  input: z.input<typeof CreateJoinTokenInput>;
  db: Db;
}): Promise<CreatedJoinToken> {
  assertCan(actor, "fleet:write");
  // Its fields named as they are (no prefix): the CLI's --ttl and --node map from them.
  const input = parseInput(CreateJoinTokenInput, raw, "");
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
