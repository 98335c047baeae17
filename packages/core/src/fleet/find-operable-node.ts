import type { DbTransaction } from "@thaw/db";
import type { Actor } from "../auth/index.ts";
import { AppError } from "../errors/index.ts";
import { lockNodesSql } from "../placement/lock-nodes.ts";

/**
 * The actor's org's node an operator acts on (rotate, revoke, drain), locked for the
 * transaction: by id, or by its name or instance id (how the CLI names it). A node of
 * another org, or a terminated one, is not found.
 */
export async function findOperableNode(
  tx: DbTransaction,
  actor: Actor,
  node: string,
): Promise<{
  id: string;
  name: string;
  state: string;
  credentialRevokedAt: Date | null;
}> {
  const isId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(node);
  const matches = await tx.node.findMany({
    where: {
      orgId: actor.orgId,
      state: { not: "terminated" },
      OR: isId ? [{ id: node }] : [{ name: node }, { instanceId: node }],
    },
    select: { id: true, name: true, state: true, credentialRevokedAt: true },
    take: 2,
  });
  if (matches.length === 0)
    throw new AppError("NOT_FOUND", `No node ${node} in this org.`, { field: "nodeId" });
  if (matches.length > 1)
    throw new AppError(
      "BAD_REQUEST",
      `${node} names more than one node: use the node's id (thaw admin node list).`,
      { field: "nodeId" },
    );
  const found = matches[0]!;
  // Serialises with placement on this node (the advisory lock placeReplica takes).
  await tx.$queryRaw(lockNodesSql([found.id]));
  return found;
}
