import type { DbClient } from "@thaw/db";
import type { Actor } from "../auth/index.ts";
import { issuePrefixedSecret } from "../crypto/secrets.ts";
import { AppError } from "../errors/index.ts";
import { NODE_CREDENTIAL_KIND } from "./join-node.ts";

/**
 * A node (authenticated with its current credential) gets a new one, returned once and kept
 * as a hash. It is pending: the current credential works until the new one is first used
 * (authenticateNode then retires it), so an answer lost on the way locks nobody out; asking
 * again replaces the pending one.
 */
export async function renewNodeCredential({
  actor,
  db,
}: {
  actor: Actor;
  db: DbClient;
}): Promise<{ nodeId: string; credential: string }> {
  if (actor.type !== "node")
    throw new AppError("FORBIDDEN", "Only a node may renew its own credential.");
  const { secret, hash } = issuePrefixedSecret(NODE_CREDENTIAL_KIND);
  const updated = await db.node.updateMany({
    where: {
      id: actor.nodeId,
      orgId: actor.orgId,
      credentialRevokedAt: null,
      state: { not: "terminated" },
    },
    data: { pendingCredentialHash: hash },
  });
  if (updated.count !== 1)
    throw new AppError("UNAUTHENTICATED", "This node's credential is no longer accepted.");
  return { nodeId: actor.nodeId, credential: secret };
}
