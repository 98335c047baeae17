import { createHash, createHmac } from "node:crypto";

/**
 * A node's credential is derived, not stored: HMAC-SHA256 of the node id under the control
 * plane's THAW_NODE_CREDENTIAL_SECRET, in the prefixed-secret format. The agent sends it to
 * the control plane (which finds the node by its SHA-256, like any other secret we issue),
 * and the scheduler recomputes it to call the agent — so the database holds only the hash,
 * and a copy of the database alone lets nobody impersonate a node or command an agent.
 * Rotating the secret makes every node join again.
 */
export function deriveNodeCredential(kind: string, secret: string, nodeId: string): string {
  const prefix = createHash("sha256").update(`prefix:${nodeId}`).digest("hex").slice(0, 12);
  const mac = createHmac("sha256", secret)
    .update(`thaw-node-credential:v1:${nodeId}`)
    .digest("base64url");
  return `${kind}_${prefix}_${mac}`;
}

/** The secret must carry real entropy: it is the key to every node of the fleet. */
export const MIN_NODE_CREDENTIAL_SECRET_LENGTH = 32;
