import type { Db } from "@thaw/db";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";

/** A node is shown as stale when it has missed this many heartbeat intervals. */
export const NODE_STALE_AFTER_SECONDS = 20;

export async function listNodes({ actor, db }: { actor: Actor; db: Db }) {
  assertCan(actor, "fleet:read");
  const nodes = await db.node.findMany({
    where: { ...orgScope(actor), state: { not: "terminated" } },
    orderBy: { createdAt: "asc" },
    include: { _count: { select: { reservations: true, images: true } } },
    take: 1000,
  });
  const now = Date.now();
  return nodes.map((n) => ({
    id: n.id,
    name: n.name,
    provider: n.provider,
    runtime: n.runtime,
    instanceType: n.instanceType,
    zone: n.zone,
    gpuModel: n.gpuModel,
    gpuCount: n.gpuCount,
    gpusUsed: n._count.reservations,
    cachedImages: n._count.images,
    networkGbps: n.networkGbps,
    diskWriteMiBps: n.diskWriteMiBps,
    state: n.state,
    agentVersion: n.agentVersion,
    lastHeartbeatAt: n.lastHeartbeatAt,
    heartbeatAgeSeconds: n.lastHeartbeatAt ? (now - n.lastHeartbeatAt.getTime()) / 1000 : null,
    stale:
      !n.lastHeartbeatAt || now - n.lastHeartbeatAt.getTime() > NODE_STALE_AFTER_SECONDS * 1000,
  }));
}
