import { prismaRows, type DbClient, type DbTransaction } from "@thaw/db";
import { loadHistoryLookup } from "../placement/load-placement-state.ts";
import {
  schedulingDeployment,
  schedulingEndpoint,
  schedulingNode,
} from "../placement/scheduling-inputs.ts";
import {
  decideSnapshotCapture,
  DEFAULT_SNAPSHOT_CAPTURE_SETTINGS,
  type SnapshotCaptureSettings,
} from "../scheduling/index.ts";
import { checkpointRefFor } from "./checkpoint-ref.ts";

// The snapshot worker's first step (ARCHITECTURE.md §3 step 7): load what the decision reads, decide,
// and record a capture as a `capturing` Snapshot row naming its source replica and node.
//
// One capture per deployment at a time, whatever number of schedulers run: the decision and
// the insert happen under the deployment's row lock (FOR NO KEY UPDATE, so that inserts of
// replicas and cold starts referencing the deployment are not blocked), and a second caller
// reads the first one's committed `capturing` row after the lock and resumes it instead of
// deciding again. Resuming is safe because the agent's capture is idempotent on the
// snapshot id: a retried job, or a second scheduler, gets the same checkpoint, not another.

/** A capture still `capturing` after this long lost its worker: it is failed and decided anew. */
export const SNAPSHOT_CAPTURE_STALE_MS = 20 * 60_000;
/** What an org may keep in snapshots when it has not set its own budget. */
export const DEFAULT_SNAPSHOT_STORAGE_BUDGET_BYTES = 200_000_000_000;

export type SnapshotCapturePlan =
  | {
      kind: "capture";
      /** True when an earlier run recorded this capture: call the agent again (idempotent). */
      resumed: boolean;
      snapshotId: string;
      endpointId: string;
      nodeId: string;
      agentUrl: string;
      /** The agent's CaptureSnapshotRequest (validated by the worker). */
      request: {
        replicaId: string;
        snapshotId: string;
        checkpointRef: string;
        sleepLevel: 1 | 2;
        push: boolean;
      };
      reason: string;
    }
  | { kind: "skip"; reason: string };

export async function beginSnapshotCapture({
  db,
  deploymentId,
  snapshotStore,
  now = new Date(),
  settings = DEFAULT_SNAPSHOT_CAPTURE_SETTINGS,
}: {
  db: DbClient;
  deploymentId: string;
  /** THAW_SNAPSHOT_REGISTRY: the operator's repository for checkpoints; null: no snapshots. */
  snapshotStore: string | null;
  now?: Date;
  settings?: SnapshotCaptureSettings;
}): Promise<SnapshotCapturePlan> {
  return db.$transaction(
    async (tx) => {
      // The endpoint's lock first, as reconcile takes it: a replica reconcile is draining (to
      // park it) is then never chosen as a source, and one chosen here is seen as a source by
      // the next reconcile, which keeps it. Then the deployment's, which orders captures.
      await tx.$queryRaw`
        SELECT id FROM "Endpoint"
        WHERE id = (SELECT "endpointId" FROM "Deployment" WHERE id = ${deploymentId}::uuid)
        FOR NO KEY UPDATE`;
      const [locked] = await tx.$queryRaw<{ id: string }[]>`
        SELECT id::text FROM "Deployment" WHERE id = ${deploymentId}::uuid FOR NO KEY UPDATE`;
      if (!locked) return { kind: "skip", reason: "deployment no longer exists" };

      await tx.snapshot.updateMany({
        where: {
          deploymentId,
          status: "capturing",
          createdAt: { lt: new Date(now.getTime() - SNAPSHOT_CAPTURE_STALE_MS) },
        },
        data: { status: "deleted", error: "capture did not finish: its worker was lost" },
      });
      const inProgress = await tx.snapshot.findFirst({
        where: { deploymentId, status: "capturing" },
        orderBy: { createdAt: "asc" },
      });
      if (inProgress) return resume(tx, inProgress);
      return decideAndRecord(tx, deploymentId, snapshotStore, now, settings);
    },
    { timeout: 30_000 },
  );
}

async function resume(
  tx: DbTransaction,
  snapshot: {
    id: string;
    deploymentId: string;
    uri: string;
    sleepLevel: number;
    location: "node" | "store";
    sourceNodeId: string | null;
    sourceReplicaId: string | null;
  },
): Promise<SnapshotCapturePlan> {
  const [node, deployment] = await Promise.all([
    snapshot.sourceNodeId
      ? tx.node.findUnique({ where: { id: snapshot.sourceNodeId }, select: { agentUrl: true } })
      : null,
    tx.deployment.findUniqueOrThrow({
      where: { id: snapshot.deploymentId },
      select: { endpointId: true },
    }),
  ]);
  if (!snapshot.sourceNodeId || !snapshot.sourceReplicaId || !node?.agentUrl)
    return {
      kind: "skip",
      reason: `snapshot ${snapshot.id} is capturing on a node we cannot reach`,
    };
  return {
    kind: "capture",
    resumed: true,
    snapshotId: snapshot.id,
    endpointId: deployment.endpointId,
    nodeId: snapshot.sourceNodeId,
    agentUrl: node.agentUrl,
    request: {
      replicaId: snapshot.sourceReplicaId,
      snapshotId: snapshot.id,
      checkpointRef: snapshot.uri,
      sleepLevel: snapshot.sleepLevel >= 2 ? 2 : 1,
      push: snapshot.location === "store",
    },
    reason: "resuming a capture already recorded",
  };
}

async function decideAndRecord(
  tx: DbTransaction,
  deploymentId: string,
  snapshotStore: string | null,
  now: Date,
  settings: SnapshotCaptureSettings,
): Promise<SnapshotCapturePlan> {
  const deploymentRow = await tx.deployment.findUniqueOrThrow({
    where: { id: deploymentId },
    include: { endpoint: { include: { org: { select: { snapshotStorageBudgetBytes: true } } } } },
  });
  const endpointRow = deploymentRow.endpoint;
  // A snapshot of a version the endpoint has rolled away from would never be restored.
  if (endpointRow.deletedAt || endpointRow.activeDeploymentId !== deploymentId)
    return { kind: "skip", reason: "not the endpoint's active deployment" };
  const deployment = schedulingDeployment(deploymentRow);
  const orgId = deploymentRow.orgId;

  // Tensor-parallel degree = GPUs per replica: multi-GPU restores fail by degree and driver.
  const degree = endpointRow.gpuCount;
  const [replicas, snapshots, history, coldStartsInWindow, used, quarantinedElsewhere] =
    await Promise.all([
      tx.replica.findMany({
        where: { deploymentId, state: "ready", nodeId: { not: null } },
        include: { node: true },
        orderBy: { id: "asc" },
      }),
      tx.snapshot.findMany({ where: { deploymentId } }),
      loadHistoryLookup(prismaRows(tx), orgId, deployment),
      tx.coldStart.count({
        where: {
          endpointId: endpointRow.id,
          requestedAt: { gt: new Date(now.getTime() - settings.windowSeconds * 1000) },
        },
      }),
      tx.snapshot.aggregate({
        where: { orgId, status: { in: ["capturing", "ready", "quarantined"] } },
        _sum: { bytes: true },
      }),
      degree < 2
        ? []
        : tx.snapshot.findMany({
            where: {
              orgId,
              status: "quarantined",
              deploymentId: { not: deploymentId },
              deployment: { endpoint: { gpuCount: degree } },
            },
            select: { deploymentId: true, gpuModel: true, driverVersion: true },
          }),
    ]);
  const agentUrls = new Map(replicas.map((r) => [r.id, r.node!.agentUrl]));
  const decision = decideSnapshotCapture({
    snapshotStore,
    endpoint: schedulingEndpoint(endpointRow),
    deployment,
    sources: replicas
      .filter((r) => r.node?.agentUrl)
      .map((r) => ({
        replicaId: r.id,
        node: schedulingNode(r.node!, {
          reservedGpus: 0,
          imageDigests: [],
          snapshotIds: [],
          warmReplicas: [],
          startsInFlight: 0,
        }),
      })),
    snapshots: snapshots.map((s) => ({
      id: s.id,
      gpuModel: s.gpuModel,
      driverVersion: s.driverVersion,
      cudaVersion: s.cudaVersion,
      status: s.status,
      captureFailed: s.status === "deleted" && s.error !== null,
      changedAt: s.updatedAt,
    })),
    history,
    tensorParallel: { degree, quarantinedElsewhere },
    coldStartsInWindow,
    storage: {
      usedBytes: Number(used._sum.bytes ?? 0n),
      budgetBytes: Number(
        endpointRow.org.snapshotStorageBudgetBytes ?? DEFAULT_SNAPSHOT_STORAGE_BUDGET_BYTES,
      ),
    },
    now,
    settings,
  });
  if (!decision.capture || !snapshotStore) return { kind: "skip", reason: decision.reason };

  const snapshotId = crypto.randomUUID();
  const checkpointRef = checkpointRefFor(snapshotStore, { orgId, deploymentId, snapshotId });
  await tx.snapshot.create({
    data: {
      id: snapshotId,
      orgId,
      deploymentId,
      ...decision.binding,
      location: decision.push ? "store" : "node",
      uri: checkpointRef,
      bytes: BigInt(Math.round(decision.figures.estimatedBytes)),
      sleepLevel: decision.sleepLevel,
      status: "capturing",
      sourceNodeId: decision.source.nodeId,
      sourceReplicaId: decision.source.replicaId,
    },
  });
  return {
    kind: "capture",
    resumed: false,
    snapshotId,
    endpointId: endpointRow.id,
    nodeId: decision.source.nodeId,
    agentUrl: agentUrls.get(decision.source.replicaId)!,
    request: {
      replicaId: decision.source.replicaId,
      snapshotId,
      checkpointRef,
      sleepLevel: decision.sleepLevel,
      push: decision.push,
    },
    reason: decision.reason,
  };
}
