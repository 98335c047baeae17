import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { AppError } from "../errors/index.ts";
import { reconcileSoon, type WithFollowUps } from "../queues/follow-ups.ts";
import { endpointsOnNode } from "./endpoints-on-node.ts";
import { findOperableNode } from "./find-operable-node.ts";
import { type OperatedNode } from "./node-action-request.ts";

/**
 * An operator stops trusting a node (its credential leaked, its host is suspect): no
 * credential of it is accepted from now on — current, pending, or presented to join again —
 * and it is drained like drainNode (nothing new placed, its replicas replaced elsewhere). Its
 * host may join again only with a join token created for this node. Reconciling
 * the endpoints with replicas on it follows.
 */
export async function revokeNode({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: { node: string; reason?: string | undefined };
  db: DbClient;
}): Promise<WithFollowUps<OperatedNode>> {
  assertCan(actor, "fleet:write");
  const reason = input.reason?.trim() || "credential revoked by an operator";
  if (reason.length > 200)
    throw new AppError("BAD_REQUEST", "reason: at most 200 characters.", { field: "reason" });
  const result = await db.$transaction(async (tx) => {
    const node = await findOperableNode(tx, actor, input.node);
    await tx.node.update({
      where: { id: node.id },
      data: {
        credentialHash: null,
        pendingCredentialHash: null,
        credentialRotationRequestedAt: null,
        credentialRevokedAt: new Date(),
        state: "draining",
        stateReason: reason,
      },
    });
    await recordAudit(tx, actor, {
      action: "node.revoked",
      targetType: "node",
      targetId: node.id,
      metadata: { name: node.name, reason, previousState: node.state },
    });
    return { nodeId: node.id, name: node.name, endpointIds: await endpointsOnNode(tx, node.id) };
  });
  return { result, followUps: result.endpointIds.map(reconcileSoon) };
}
