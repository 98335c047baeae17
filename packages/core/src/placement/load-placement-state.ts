import type { Db } from "@thaw/db";
import {
  historyCellKeys,
  type HistoryCell,
  type HistoryForOption,
  type Locality,
  type SchedulingDeployment,
  type SchedulingNode,
  type SchedulingSnapshot,
} from "../scheduling/index.ts";
import type { StartPath } from "../vocabulary/index.ts";
import { schedulingNode } from "./scheduling-inputs.ts";

// What one placement decision reads from Postgres, in a handful of set-based queries
// (no per-node round trips): a fleet of thousands of nodes is a few result sets.

const IN_FLIGHT = ["scheduled", "dispatched", "running"] as const;

/**
 * How many nodes with free GPUs one decision scores, besides every node that already holds
 * something of the deployment (a warm replica, a snapshot, the image). Like Kubernetes'
 * percentageOfNodesToScore: on a fleet of thousands, scoring a sample of the interchangeable
 * cold nodes finds as good a place as scoring all of them, at a fraction of the cost.
 */
export const COLD_NODE_SAMPLE = 48;

export async function loadSchedulingNodes(
  db: Db,
  orgId: string,
  gpuType: string,
  want: { deploymentId: string; imageDigests: string[]; gpus: number; sample?: number },
): Promise<SchedulingNode[]> {
  const ids = await shortlistNodes(db, orgId, gpuType, want);
  if (ids.length === 0) return [];
  const rows = await db.node.findMany({ where: { id: { in: ids } }, orderBy: { id: "asc" } });
  const [reserved, images, copies, warm, inFlight] = await Promise.all([
    db.gpuReservation.groupBy({ by: ["nodeId"], where: { nodeId: { in: ids } }, _count: true }),
    db.nodeImage.findMany({
      where: { nodeId: { in: ids } },
      select: { nodeId: true, digest: true },
    }),
    db.nodeSnapshot.findMany({
      where: { nodeId: { in: ids } },
      select: { nodeId: true, snapshotId: true },
    }),
    db.replica.findMany({
      where: { orgId, state: "warm", nodeId: { in: ids } },
      select: { id: true, deploymentId: true, nodeId: true },
    }),
    db.coldStart.groupBy({
      by: ["nodeId"],
      where: { nodeId: { in: ids }, status: { in: [...IN_FLIGHT] } },
      _count: true,
    }),
  ]);
  const group = <T extends { nodeId: string | null }>(list: T[]) => {
    const map = new Map<string, T[]>();
    for (const item of list) {
      if (!item.nodeId) continue;
      const at = map.get(item.nodeId) ?? [];
      at.push(item);
      map.set(item.nodeId, at);
    }
    return map;
  };
  const reservedBy = new Map(reserved.map((r) => [r.nodeId, r._count]));
  const inFlightBy = new Map(inFlight.map((r) => [r.nodeId, r._count]));
  const imagesBy = group(images);
  const copiesBy = group(copies);
  const warmBy = group(warm);
  return rows.map((row) =>
    schedulingNode(row, {
      reservedGpus: reservedBy.get(row.id) ?? 0,
      imageDigests: (imagesBy.get(row.id) ?? []).map((i) => i.digest),
      snapshotIds: (copiesBy.get(row.id) ?? []).map((c) => c.snapshotId),
      warmReplicas: (warmBy.get(row.id) ?? []).map((r) => ({
        replicaId: r.id,
        deploymentId: r.deploymentId,
      })),
      startsInFlight: inFlightBy.get(row.id) ?? 0,
    }),
  );
}

export async function loadSchedulingSnapshots(
  db: Db,
  deploymentId: string,
): Promise<SchedulingSnapshot[]> {
  const rows = await db.snapshot.findMany({
    where: { deploymentId, status: { in: ["ready", "quarantined"] } },
  });
  return rows.map((s) => ({
    id: s.id,
    deploymentId: s.deploymentId,
    gpuModel: s.gpuModel,
    driverVersion: s.driverVersion,
    cudaVersion: s.cudaVersion,
    status: s.status,
    bytes: Number(s.bytes),
    sleepLevel: Math.min(2, Math.max(0, s.sleepLevel)) as 0 | 1 | 2,
    inStore: s.location === "store",
  }));
}

/** History cells of every (path, locality) an option of this deployment can have. */
export async function loadHistoryLookup(
  db: Db,
  orgId: string,
  deployment: SchedulingDeployment,
): Promise<(path: StartPath, locality: Locality) => HistoryForOption> {
  const keys = historyCellKeys({
    deploymentId: deployment.id,
    endpointId: deployment.endpointId,
    modelBytes: deployment.modelBytes,
    path: "pull",
    locality: "cold",
  });
  const rows = await db.historyStat.findMany({
    where: { orgId, OR: keys.map((k) => ({ scope: k.scope, scopeKey: k.scopeKey })) },
  });
  const cells = new Map<string, HistoryCell>();
  for (const row of rows) {
    cells.set(`${row.scope}|${row.path}|${row.locality}`, {
      samples: row.samples,
      meanLog: row.meanLog,
      m2Log: row.m2Log,
      predictionErrorLog: row.predictionErrorLog,
    });
  }
  return (path, locality) => {
    const at = (scope: string) => cells.get(`${scope}|${path}|${locality}`);
    const history: HistoryForOption = {};
    const deploymentCell = at("deployment");
    const endpointCell = at("endpoint");
    const fleetCell = at("fleet");
    if (deploymentCell) history.deployment = deploymentCell;
    if (endpointCell) history.endpoint = endpointCell;
    if (fleetCell) history.fleet = fleetCell;
    return history;
  };
}

/**
 * The nodes worth scoring: those holding the deployment's image, a snapshot of it or an idle
 * warm replica of it, plus a random sample of the others with enough free GPUs — least
 * loaded first, randomised so that concurrent placements spread instead of colliding.
 */
async function shortlistNodes(
  db: Db,
  orgId: string,
  gpuType: string,
  want: { deploymentId: string; imageDigests: string[]; gpus: number; sample?: number },
): Promise<string[]> {
  // A batch of n replicas needs room for n: sample at least that many cold nodes.
  const limit = Math.max(COLD_NODE_SAMPLE, (want.sample ?? 1) * 2);
  const rows = await db.$queryRaw<{ id: string }[]>`
    WITH fleet AS (
      SELECT id, "gpuCount" FROM "Node"
      WHERE "orgId" = ${orgId}::uuid AND state = 'ready' AND "gpuModel" = ${gpuType}
    ), reserved AS (
      SELECT r."nodeId", count(*)::int AS n FROM "GpuReservation" r
      JOIN fleet f ON f.id = r."nodeId" GROUP BY r."nodeId"
    ), holding AS (
      SELECT i."nodeId" AS id FROM "NodeImage" i JOIN fleet f ON f.id = i."nodeId"
        WHERE i.digest = ANY(${want.imageDigests})
      UNION
      SELECT c."nodeId" FROM "NodeSnapshot" c JOIN "Snapshot" s ON s.id = c."snapshotId"
        JOIN fleet f ON f.id = c."nodeId"
        WHERE s."deploymentId" = ${want.deploymentId}::uuid
      UNION
      SELECT p."nodeId" FROM "Replica" p JOIN fleet f ON f.id = p."nodeId"
        WHERE p.state = 'warm' AND p."deploymentId" = ${want.deploymentId}::uuid
    ), sampled AS (
      SELECT f.id FROM fleet f LEFT JOIN reserved r ON r."nodeId" = f.id
      WHERE f."gpuCount" - COALESCE(r.n, 0) >= ${want.gpus}
        AND f.id NOT IN (SELECT id FROM holding)
      ORDER BY COALESCE(r.n, 0), random()
      LIMIT ${limit}
    )
    SELECT id::text FROM holding UNION SELECT id::text FROM sampled`;
  return rows.map((r) => r.id);
}
