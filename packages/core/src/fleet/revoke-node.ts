import type { DbClient } from "@thaw/db";
import type { Actor } from "../auth/index.ts";
import type { WithFollowUps } from "../queues/follow-ups.ts";
import { type OperatedNode } from "./node-action-request.ts";
import { takeNodeOutOfService } from "./take-node-out-of-service.ts";

/**
 * An operator stops trusting a node (its credential leaked, its host is suspect): no
 * credential of it is accepted from now on — current, pending, or presented to join again —
 * and it is drained like drainNode (nothing new placed, its replicas replaced elsewhere). Its
 * host may join again only with a join token created for this node. Reconciling the endpoints
 * with replicas on it follows.
 */
export function revokeNode(options: {
  actor: Actor;
  input: { node: string; reason?: string | undefined };
  db: DbClient;
}): Promise<WithFollowUps<OperatedNode>> {
  return takeNodeOutOfService({
    ...options,
    defaultReason: "credential revoked by an operator",
    auditAction: "node.revoked",
    alsoSet: {
      credentialHash: null,
      pendingCredentialHash: null,
      credentialRotationRequestedAt: null,
      credentialRevokedAt: new Date(),
    },
  });
}
