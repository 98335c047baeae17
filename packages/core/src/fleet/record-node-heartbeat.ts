import type { DbClient } from "@thaw/db";
import type { Actor } from "../auth/index.ts";
import { AppError } from "../errors/index.ts";
import type { JoinNodeInput } from "./join-node.ts";
import { HEARTBEAT_INTERVAL_SECONDS } from "./join-node.ts";

export interface NodeHeartbeatInput {
  agentVersion: string;
  gpusFree: number;
  gpusUsed: number;
  figures?: JoinNodeInput["figures"] | undefined;
  inventory: {
    images: { digest: string; bytes: number; estargz: boolean }[];
    snapshotIds: string[];
    warmReplicaIds: string[];
  };
}

/**
 * A node's heartbeat: it proves liveness (a booting or lost node becomes ready), refreshes
 * the host's figures, and replaces the node's image inventory. A node writes only its own row.
 */
export async function recordNodeHeartbeat({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: NodeHeartbeatInput;
  db: DbClient;
}) {
  if (actor.type !== "node") throw new AppError("FORBIDDEN", "Only a node may send heartbeats.");
  const now = new Date();
  return db.$transaction(async (tx) => {
    const node = await tx.node.findFirst({
      where: { id: actor.nodeId, orgId: actor.orgId },
      select: { state: true },
    });
    if (!node) throw new AppError("NOT_FOUND", "Node not found.");
    // Draining and terminated are operator decisions; a heartbeat does not undo them.
    const state = node.state === "draining" || node.state === "terminated" ? node.state : "ready";
    const f = input.figures;
    await tx.node.update({
      where: { id: actor.nodeId },
      data: {
        lastHeartbeatAt: now,
        state,
        stateReason: null,
        agentVersion: input.agentVersion,
        ...(f && {
          gpuCount: f.gpuCount,
          vcpus: f.vcpus,
          networkGbps: f.networkGbps,
          diskReadMiBps: f.diskReadMiBps,
          diskWriteMiBps: f.diskWriteMiBps,
          pcieGBps: f.pcieGBps,
          registryRttMs: f.registryRttMs,
        }),
      },
    });
    const digests = input.inventory.images.map((i) => i.digest);
    await tx.nodeImage.deleteMany({ where: { nodeId: actor.nodeId, digest: { notIn: digests } } });
    if (input.inventory.images.length > 0) {
      await tx.nodeImage.createMany({
        data: input.inventory.images.map((i) => ({
          nodeId: actor.nodeId,
          digest: i.digest,
          bytes: BigInt(i.bytes),
          estargz: i.estargz,
        })),
        skipDuplicates: true,
      });
    }
    return { nodeId: actor.nodeId, state, heartbeatIntervalSeconds: HEARTBEAT_INTERVAL_SECONDS };
  });
}
