import type { DbClient, DbTransaction } from "@thaw/db";
import { HEARTBEAT_INTERVAL_SECONDS, type HeartbeatRequest } from "@thaw/protocol";
import type { Actor } from "../auth/index.ts";
import { AppError } from "../errors/index.ts";
import { memoryBytesOf } from "./host-memory.ts";
import { measuredDiskColumns } from "./measured-disk-columns.ts";
import { replicaReasonData } from "../placement/replica-reason.ts";

/** A heartbeat as the agent protocol's HeartbeatRequest parses it. */
export type NodeHeartbeatInput = HeartbeatRequest;

/**
 * A node's heartbeat: it proves liveness (a booting or lost node becomes ready), refreshes
 * the host's figures, replaces the node's image inventory and forgets parked replicas the
 * node no longer holds. A node writes only its own rows.
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
      select: { id: true },
    });
    if (!node) throw new AppError("NOT_FOUND", "Node not found.");
    const f = input.figures;
    await tx.node.update({
      where: { id: actor.nodeId },
      data: {
        lastHeartbeatAt: now,
        agentVersion: input.agentVersion,
        ...(f && {
          gpuCount: f.gpuCount,
          vcpus: f.vcpus,
          ...(f.memoryGiB !== undefined ? { memoryBytes: memoryBytesOf(f) } : {}),
          ...(f.restoreStreams !== undefined ? { restoreStreams: f.restoreStreams } : {}),
          gpuMemoryService: f.gpuMemoryService ?? false,
          rdmaGbps: f.rdmaGbps ?? 0,
          peerTransfer: f.peerTransfer ?? false,
          networkGbps: f.networkGbps,
          diskReadMiBps: f.diskReadMiBps,
          diskWriteMiBps: f.diskWriteMiBps,
          ...measuredDiskColumns(f),
          pcieGBps: f.pcieGBps,
          registryRttMs: f.registryRttMs,
        }),
      },
    });
    // Draining and terminated are operator (or fleet worker) decisions; a heartbeat does not
    // undo them. Decided by the update's own condition, not by a state read earlier: a drain
    // committed while this heartbeat was on its way must not be overwritten with `ready`.
    await tx.node.updateMany({
      where: { id: actor.nodeId, state: { notIn: ["draining", "terminated"] } },
      data: { state: "ready", stateReason: null },
    });
    const { state, credentialRotationRequestedAt } = await tx.node.findUniqueOrThrow({
      where: { id: actor.nodeId },
      select: { state: true, credentialRotationRequestedAt: true },
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
    await forgetVanishedWarmReplicas(tx, actor.nodeId, input.inventory.warmReplicaIds, now);
    if (input.inventory.sleepingReplicaIds)
      await forgetVanishedSleepingReplicas(
        tx,
        actor.nodeId,
        input.inventory.sleepingReplicaIds,
        now,
      );
    return {
      nodeId: actor.nodeId,
      state,
      heartbeatIntervalSeconds: HEARTBEAT_INTERVAL_SECONDS,
      // An operator asked for a new credential: the agent fetches one (renewNodeCredential).
      rotateCredential: credentialRotationRequestedAt !== null,
    };
  });
}

/**
 * A replica recorded as parked (`warm`) on this node that the agent does not report holding
 * is gone — the agent restarted, or the host was replaced — and a handover to it could only
 * be refused. It is stopped and its GPUs freed. Only once it has been parked for two
 * heartbeat intervals: a heartbeat the agent assembled just before it parked the replica may
 * arrive after the park was recorded.
 */
async function forgetVanishedWarmReplicas(
  tx: DbTransaction,
  nodeId: string,
  heldWarm: string[],
  now: Date,
): Promise<void> {
  const parkedBefore = new Date(now.getTime() - 2 * HEARTBEAT_INTERVAL_SECONDS * 1000);
  const vanished = await tx.replica.findMany({
    where: { nodeId, state: "warm", id: { notIn: heldWarm }, updatedAt: { lt: parkedBefore } },
    select: { id: true },
  });
  if (vanished.length === 0) return;
  const ids = vanished.map((r) => r.id);
  await tx.replica.updateMany({
    where: { id: { in: ids }, state: "warm" },
    data: {
      state: "stopped",
      stateVersion: { increment: 1 },
      stoppedAt: now,
      ...replicaReasonData({ drainIntent: "vanished_from_node" }),
    },
  });
  await tx.gpuReservation.deleteMany({ where: { replicaId: { in: ids } } });
}

/**
 * The same for sleeping replicas (an agent that reports them): one the agent no longer holds
 * asleep cannot be woken. It holds no GPU, so it is only stopped.
 */
async function forgetVanishedSleepingReplicas(
  tx: DbTransaction,
  nodeId: string,
  heldSleeping: string[],
  now: Date,
): Promise<void> {
  const sleptBefore = new Date(now.getTime() - 2 * HEARTBEAT_INTERVAL_SECONDS * 1000);
  await tx.replica.updateMany({
    where: {
      nodeId,
      state: "sleeping",
      id: { notIn: heldSleeping },
      updatedAt: { lt: sleptBefore },
    },
    data: {
      state: "stopped",
      stateVersion: { increment: 1 },
      stoppedAt: now,
      ...replicaReasonData({ drainIntent: "vanished_from_node" }),
    },
  });
}
