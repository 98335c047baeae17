import type { Db } from "@thaw/db";
import type { Actor } from "../auth/index.ts";
import { parsePrefixedSecret, sha256Hex } from "../crypto/secrets.ts";
import { AppError } from "../errors/index.ts";
import { NODE_CREDENTIAL_KIND } from "./join-node.ts";

/**
 * Resolves an agent's bearer credential to a node actor: a lookup of its SHA-256 (the
 * credential is random, so nothing else could check it). Terminated and revoked nodes are
 * refused. The first use of a credential issued by a rotation makes it the node's only one:
 * the one before stops working.
 */
export async function authenticateNode({
  credential,
  db,
}: {
  credential: string | null;
  db: Db;
}): Promise<Extract<Actor, { type: "node" }>> {
  const refuse = () =>
    new AppError(
      "UNAUTHENTICATED",
      "Missing or invalid node credential: send 'Authorization: Bearer <credential from join>'.",
    );
  if (!credential || !parsePrefixedSecret(NODE_CREDENTIAL_KIND, credential)) throw refuse();
  const hash = sha256Hex(credential);
  const node = await db.node.findFirst({
    where: { OR: [{ credentialHash: hash }, { pendingCredentialHash: hash }] },
    select: { id: true, orgId: true, state: true, credentialHash: true, credentialRevokedAt: true },
  });
  if (!node || node.state === "terminated" || node.credentialRevokedAt) throw refuse();
  if (node.credentialHash !== hash) {
    // Conditional: a revocation or another rotation in between wins.
    const promoted = await db.node.updateMany({
      where: { id: node.id, pendingCredentialHash: hash, credentialRevokedAt: null },
      data: {
        credentialHash: hash,
        pendingCredentialHash: null,
        credentialRotationRequestedAt: null,
      },
    });
    if (promoted.count !== 1) throw refuse();
    await db.auditLog.create({
      data: {
        orgId: node.orgId,
        actorType: "node",
        actorId: node.id,
        action: "node.credential_rotated",
        targetType: "node",
        targetId: node.id,
        metadata: {},
      },
    });
  }
  return { type: "node", nodeId: node.id, orgId: node.orgId };
}
