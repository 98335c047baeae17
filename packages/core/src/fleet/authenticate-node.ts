import type { Db } from "@thaw/db";
import type { Actor } from "../auth/index.ts";
import { parsePrefixedSecret, sha256Hex } from "../crypto/secrets.ts";
import { AppError } from "../errors/index.ts";
import { NODE_CREDENTIAL_KIND } from "./join-node.ts";

/** Resolves an agent's bearer credential to a node actor; terminated nodes are refused. */
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
  const node = await db.node.findUnique({
    where: { credentialHash: sha256Hex(credential) },
    select: { id: true, orgId: true, state: true },
  });
  if (!node || node.state === "terminated") throw refuse();
  return { type: "node", nodeId: node.id, orgId: node.orgId };
}
