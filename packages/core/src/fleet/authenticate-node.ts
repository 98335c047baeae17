import type { Db } from "@thaw/db";
import type { Actor } from "../auth/index.ts";
import { deriveNodeCredential } from "../crypto/node-credential.ts";
import { hashesEqual, parsePrefixedSecret, sha256Hex } from "../crypto/secrets.ts";
import { AppError } from "../errors/index.ts";
import { NODE_CREDENTIAL_KIND } from "./join-node.ts";

/** Resolves an agent's bearer credential to a node actor; terminated nodes are refused. */
export async function authenticateNode({
  credential,
  db,
  credentialSecret,
}: {
  credential: string | null;
  db: Db;
  /** THAW_NODE_CREDENTIAL_SECRET: a credential not derived from it (rotated) is refused. */
  credentialSecret: string;
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
  // Issued under another secret (rotated, or before credentials were derived): the scheduler
  // could not reach this agent with it, so the agent must join again (it does on a 401).
  const expected = deriveNodeCredential(NODE_CREDENTIAL_KIND, credentialSecret, node.id);
  if (!hashesEqual(sha256Hex(expected), sha256Hex(credential))) throw refuse();
  return { type: "node", nodeId: node.id, orgId: node.orgId };
}
