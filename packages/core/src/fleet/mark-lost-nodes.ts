import type { Db } from "@thaw/db";

/** Missed heartbeats (at 5 s each) before a node is declared lost. */
export const NODE_LOST_AFTER_SECONDS = 30;

/**
 * Declares nodes that stopped heartbeating lost. A system task across orgs: it reads only
 * node liveness. A lost node that heartbeats again becomes ready (recordNodeHeartbeat).
 */
export async function markLostNodes({
  db,
  now = new Date(),
  graceSeconds = NODE_LOST_AFTER_SECONDS,
}: {
  db: Db;
  now?: Date;
  graceSeconds?: number;
}): Promise<number> {
  const cutoff = new Date(now.getTime() - graceSeconds * 1000);
  const result = await db.node.updateMany({
    where: {
      state: { in: ["ready", "booting"] },
      OR: [
        { lastHeartbeatAt: { lt: cutoff } },
        { lastHeartbeatAt: null, createdAt: { lt: cutoff } },
      ],
    },
    data: { state: "lost", stateReason: `no heartbeat for more than ${graceSeconds} s` },
  });
  return result.count;
}
