import type { DbClient } from "@thaw/db";
import { GPU_HOLDING_REPLICA_STATES } from "../vocabulary/index.ts";
import { lockNodesSql } from "../placement/lock-nodes.ts";

/**
 * Takes an idle host out of placement before it is terminated. Under the node's placement
 * lock (the advisory lock placeReplica takes), it checks that the host still holds no GPU
 * reservation and no replica — a placement racing with the retirement either committed
 * first (and the host is kept) or sees the host draining and goes elsewhere.
 * Returns the instance to terminate, or null when the host is no longer retirable.
 */
export async function beginHostRetirement({
  db,
  nodeId,
  reason,
}: {
  db: DbClient;
  nodeId: string;
  reason: string;
}): Promise<{ instanceId: string | null; orgId: string } | null> {
  return db.$transaction(async (tx) => {
    await tx.$queryRaw(lockNodesSql([nodeId]));
    const node = await tx.node.findUnique({
      where: { id: nodeId },
      select: { state: true, instanceId: true, orgId: true },
    });
    if (!node || node.state !== "ready") return null;
    const [reservations, replicas] = await Promise.all([
      tx.gpuReservation.count({ where: { nodeId } }),
      tx.replica.count({
        where: { nodeId, state: { in: [...GPU_HOLDING_REPLICA_STATES] } },
      }),
    ]);
    if (reservations > 0 || replicas > 0) return null;
    await tx.node.update({
      where: { id: nodeId },
      data: { state: "draining", stateReason: reason },
    });
    await tx.auditLog.create({
      data: {
        orgId: node.orgId,
        actorType: "system",
        action: "node.retired",
        targetType: "node",
        targetId: nodeId,
        metadata: { reason, instanceId: node.instanceId },
      },
    });
    return { instanceId: node.instanceId, orgId: node.orgId };
  });
}

/** After the provider terminated the instance (or when it is already gone). */
export async function markHostsTerminated({
  db,
  hosts,
}: {
  db: DbClient;
  hosts: readonly { nodeId: string; reason: string }[];
}): Promise<void> {
  for (const { nodeId, reason } of hosts) {
    await db.node.updateMany({
      where: { id: nodeId, state: { not: "terminated" } },
      data: { state: "terminated", stateReason: reason, credentialHash: null },
    });
  }
}
