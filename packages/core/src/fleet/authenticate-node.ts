import { directSql, Prisma, type DbClient } from "@thaw/db";
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
  db: DbClient;
}): Promise<Extract<Actor, { type: "node" }>> {
  const refuse = () =>
    new AppError(
      "UNAUTHENTICATED",
      "Missing or invalid node credential: send 'Authorization: Bearer <credential from join>'.",
    );
  if (!credential || !parsePrefixedSecret(NODE_CREDENTIAL_KIND, credential)) throw refuse();
  const hash = sha256Hex(credential);
  // Every agent call starts here, so the lookup goes on node-postgres (the hot-path client,
  // @thaw/db's direct-sql.ts), not through Prisma's query layer; the rare promotion below
  // stays on Prisma.
  const [node] = await directSql(db).rows<{
    id: string;
    orgId: string;
    state: string;
    credentialHash: string | null;
    credentialRevokedAt: Date | null;
  }>(Prisma.sql`
    SELECT id::text AS id, "orgId"::text AS "orgId", state::text AS state, "credentialHash",
           "credentialRevokedAt"
    FROM "Node"
    WHERE "credentialHash" = ${hash} OR "pendingCredentialHash" = ${hash}
    LIMIT 1`);
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
