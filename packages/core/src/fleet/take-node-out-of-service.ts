import type { DbClient, Prisma } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { AppError } from "../errors/index.ts";
import { reconcileSoon, type WithFollowUps } from "../queues/follow-ups.ts";
import { endpointsOnNode } from "./endpoints-on-node.ts";
import { findOperableNode } from "./find-operable-node.ts";
import { type OperatedNode } from "./node-action-request.ts";

/**
 * What drainNode and revokeNode share: an operator's reason (or the action's default), the
 * node found in the actor's org, the node set draining with that reason plus what the action
 * changes besides, one audit row, and a reconcile of every endpoint with replicas on it.
 */
export async function takeNodeOutOfService({
  actor,
  input,
  db,
  defaultReason,
  auditAction,
  alsoSet,
}: {
  actor: Actor;
  input: { node: string; reason?: string | undefined };
  db: DbClient;
  defaultReason: string;
  auditAction: "node.drained" | "node.revoked";
  /** Columns the action changes besides the state and its reason. */
  alsoSet: Prisma.NodeUpdateInput;
}): Promise<WithFollowUps<OperatedNode>> {
  assertCan(actor, "fleet:write");
  const reason = input.reason?.trim() || defaultReason;
  if (reason.length > 200)
    throw new AppError("BAD_REQUEST", "reason: at most 200 characters.", { field: "reason" });
  const result = await db.$transaction(async (tx) => {
    const node = await findOperableNode(tx, actor, input.node);
    await tx.node.update({
      where: { id: node.id },
      data: { ...alsoSet, state: "draining", stateReason: reason },
    });
    await recordAudit(tx, actor, {
      action: auditAction,
      targetType: "node",
      targetId: node.id,
      metadata: { name: node.name, reason, previousState: node.state },
    });
    return { nodeId: node.id, name: node.name, endpointIds: await endpointsOnNode(tx, node.id) };
  });
  return { result, followUps: result.endpointIds.map(reconcileSoon) };
}
