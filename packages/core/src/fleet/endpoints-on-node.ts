import type { DbTransaction } from "@thaw/db";

/** Endpoints with a live replica on the node: to reconcile when it is drained. */
export async function endpointsOnNode(tx: DbTransaction, nodeId: string): Promise<string[]> {
  const rows = await tx.replica.findMany({
    where: { nodeId, state: { in: ["placed", "starting", "ready", "warm"] } },
    select: { endpointId: true },
    distinct: ["endpointId"],
  });
  return rows.map((r) => r.endpointId);
}
