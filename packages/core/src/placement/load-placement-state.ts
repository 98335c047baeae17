import { Prisma, type SqlRows } from "@thaw/db";
import {
  historyCellKeys,
  type HistoryCell,
  type HistoryForOption,
  type Locality,
  type PeerSource,
  type SchedulingDeployment,
  type SchedulingNode,
  type SchedulingSnapshot,
  type StoredKernelCache,
} from "../scheduling/index.ts";
import type { StartPath } from "../vocabulary/index.ts";
import { nodeScenarioHost, type NodeHostColumns } from "../scheduling/node-scenario-host.ts";
import { schedulingNode, type NodeRow } from "./scheduling-inputs.ts";

// What one placement decision reads from Postgres, in a handful of set-based queries
// (no per-node round trips): a fleet of thousands of nodes is a few result sets.

/**
 * How many nodes with free GPUs one decision scores, besides every node that already holds
 * something of the deployment (a warm replica, a snapshot, the image). Like Kubernetes'
 * percentageOfNodesToScore: on a fleet of thousands, scoring a sample of the interchangeable
 * cold nodes finds as good a place as scoring all of them, at a fraction of the cost.
 */
export const COLD_NODE_SAMPLE = 48;

/** `rows`: the hot path's direct statements, or `prismaRows(db)` elsewhere. */
export async function loadSchedulingNodes(
  rows: SqlRows,
  orgId: string,
  gpuType: string,
  want: { deploymentId: string; imageDigests: string[]; gpus: number; sample?: number },
): Promise<SchedulingNode[]> {
  // One statement: the shortlist, then each shortlisted node with what it holds — one round
  // trip and one result set per decision batch, however large the fleet.
  const shortlisted = await rows<ShortlistedNodeRow>(Prisma.sql`
    WITH shortlist AS (${shortlistSql(orgId, gpuType, want)})
    SELECT n.id::text, n.name, n.state::text, n."gpuModel", n."gpuCount", n."driverVersion",
      n."cudaVersion", n.vcpus, n."networkGbps", n."registryRttMs", n."diskReadMiBps",
      n."diskWriteMiBps", n."volumeThroughputMiBps", n."measuredDiskReadMiBps",
      n."measuredDiskWriteMiBps", n."pcieGBps", n."restoreStreams",
      n."gpuMemoryService", n."memoryBytes"::float8 AS "memoryBytes", n."rdmaGbps",
      n."peerTransfer",
      (SELECT count(*)::int FROM "GpuReservation" g WHERE g."nodeId" = n.id) AS "reservedGpus",
      ARRAY(SELECT i.digest FROM "NodeImage" i WHERE i."nodeId" = n.id) AS "imageDigests",
      ARRAY(SELECT c."snapshotId"::text FROM "NodeSnapshot" c WHERE c."nodeId" = n.id)
        AS "snapshotIds",
      ARRAY(SELECT p.id::text FROM "Replica" p
        WHERE p."nodeId" = n.id AND p."orgId" = ${orgId}::uuid AND p.state = 'warm'
        ORDER BY p.id) AS "warmReplicaIds",
      ARRAY(SELECT p."deploymentId"::text FROM "Replica" p
        WHERE p."nodeId" = n.id AND p."orgId" = ${orgId}::uuid AND p.state = 'warm'
        ORDER BY p.id) AS "warmDeploymentIds",
      ARRAY(SELECT p.id::text || ' ' || p."deploymentId"::text || ' ' || coalesce(p."sleepLevel", 1)
        FROM "Replica" p
        WHERE p."nodeId" = n.id AND p."orgId" = ${orgId}::uuid AND p.state = 'sleeping'
          AND NOT EXISTS (SELECT 1 FROM "GpuReservation" g
            WHERE g."nodeId" = n.id AND g."gpuIndex" = ANY(p."sleepingGpus"))
        ORDER BY p.id) AS "sleeping",
      (SELECT count(*)::int FROM "ColdStart" s
        WHERE s."nodeId" = n.id AND s.status IN ('scheduled', 'dispatched', 'running'))
        AS "startsInFlight"
    FROM "Node" n JOIN shortlist ON shortlist.id = n.id
    ORDER BY n.id`);
  return shortlisted.map((row) =>
    schedulingNode(
      { ...row, state: row.state as NodeRow["state"] },
      {
        reservedGpus: row.reservedGpus,
        imageDigests: row.imageDigests,
        snapshotIds: row.snapshotIds,
        warmReplicas: row.warmReplicaIds.map((replicaId, i) => ({
          replicaId,
          deploymentId: row.warmDeploymentIds[i]!,
        })),
        // Only those whose GPUs are free: a sleeping engine wakes on its own GPUs or not at all.
        sleepingReplicas: row.sleeping.map((entry) => {
          const [replicaId, deploymentId, level] = entry.split(" ");
          return {
            replicaId: replicaId!,
            deploymentId: deploymentId!,
            sleepLevel: level === "2" ? 2 : 1,
          };
        }),
        startsInFlight: row.startsInFlight,
      },
    ),
  );
}

interface ShortlistedNodeRow extends Omit<NodeRow, "state"> {
  state: string;
  reservedGpus: number;
  imageDigests: string[];
  snapshotIds: string[];
  warmReplicaIds: string[];
  warmDeploymentIds: string[];
  /** "<replicaId> <deploymentId> <sleepLevel>" of each sleeping replica that can wake now. */
  sleeping: string[];
  startsInFlight: number;
}

/**
 * The serving replicas of a deployment a peer copy can come from: ready, on a ready node whose
 * engines send through ModelExpress, with their host's figures and the peer copies they are
 * sending now (started, not yet ready, that chose them).
 */
export async function loadPeerSources(
  rows: SqlRows,
  orgId: string,
  deploymentId: string,
): Promise<PeerSource[]> {
  const sources = await rows<
    NodeHostColumns & {
      replicaId: string;
      nodeId: string;
      nodeName: string;
      transfersInFlight: number;
    }
  >(Prisma.sql`
    WITH sending AS (
      -- The peer starts (and restores whose weights a peer sends) in flight, by the source
      -- each chose: one pass over the deployment's.
      SELECT o->>'peerSourceReplicaId' AS "replicaId", count(*)::int AS n
      FROM "ColdStart" c, jsonb_array_elements(
          CASE WHEN jsonb_typeof(c.options->'feasible') = 'array' THEN c.options->'feasible'
          ELSE '[]'::jsonb END) AS o
      WHERE c."deploymentId" = ${deploymentId}::uuid AND c.path IN ('peer', 'restore')
        AND c.status IN ('scheduled', 'dispatched', 'running') AND o->>'chosen' = 'true'
      GROUP BY 1
    )
    SELECT r.id::text AS "replicaId", n.id::text AS "nodeId", n.name AS "nodeName",
      n.vcpus, n."networkGbps", n."registryRttMs", n."diskReadMiBps", n."diskWriteMiBps",
      n."volumeThroughputMiBps", n."measuredDiskReadMiBps", n."measuredDiskWriteMiBps",
      n."pcieGBps", n."restoreStreams", n."gpuMemoryService",
      n."memoryBytes"::float8 AS "memoryBytes", n."rdmaGbps",
      coalesce(s.n, 0) AS "transfersInFlight"
    FROM "Replica" r JOIN "Node" n ON n.id = r."nodeId"
      LEFT JOIN sending s ON s."replicaId" = r.id::text
    WHERE r."orgId" = ${orgId}::uuid AND r."deploymentId" = ${deploymentId}::uuid
      AND r.state = 'ready' AND n.state = 'ready' AND n."peerTransfer"
    -- The least loaded first: a deployment serving hundreds of replicas offers a few dozen.
    ORDER BY coalesce(s.n, 0), r.id
    LIMIT 64`);
  return sources.map((row) => ({
    replicaId: row.replicaId,
    nodeId: row.nodeId,
    nodeName: row.nodeName,
    host: nodeScenarioHost(row),
    transfersInFlight: row.transfersInFlight,
  }));
}

/** What placement knows of a deployment besides the fleet; see loadDeploymentStartInputs. */
export interface DeploymentStartInputs {
  snapshots: SchedulingSnapshot[];
  /** Its stored kernel caches (one per GPU model and driver). */
  kernelCaches: StoredKernelCache[];
  history: (path: StartPath, locality: Locality) => HistoryForOption;
}

/**
 * A deployment's snapshots, stored kernel caches and the history cells of every (path,
 * locality) an option of it can have — one statement, not three: a placement is a chain of
 * round trips, and on a busy host each statement's write, parse and wake-up costs about as
 * much as its reads.
 */
export async function loadDeploymentStartInputs(
  rows: SqlRows,
  orgId: string,
  deployment: SchedulingDeployment,
): Promise<DeploymentStartInputs> {
  const [row] = await rows<{
    snapshots: SnapshotJson[];
    kernelCaches: StoredKernelCache[];
    history: HistoryStatJson[];
  }>(Prisma.sql`
    SELECT
      (SELECT coalesce(json_agg(json_build_object('id', s.id, 'deploymentId', s."deploymentId",
          'gpuModel', s."gpuModel", 'driverVersion', s."driverVersion",
          'cudaVersion', s."cudaVersion", 'status', s.status, 'bytes', s.bytes::float8,
          'sleepLevel', s."sleepLevel", 'location', s.location) ORDER BY s.id), '[]'::json)
        FROM "Snapshot" s
        WHERE s."deploymentId" = ${deployment.id}::uuid AND s.status IN ('ready', 'quarantined')
          AND s.digest IS NOT NULL) AS snapshots,
      (SELECT coalesce(json_agg(json_build_object('id', k.id, 'gpuModel', k."gpuModel",
          'driverVersion', k."driverVersion", 'bytes', k.bytes::float8) ORDER BY k.id), '[]'::json)
        FROM "KernelCache" k
        WHERE k."orgId" = ${orgId}::uuid AND k."deploymentId" = ${deployment.id}::uuid
          AND k.status = 'ready' AND k.digest IS NOT NULL) AS "kernelCaches",
      (${historyStatsSql(orgId, deployment)}) AS history`);
  return {
    snapshots: (row?.snapshots ?? []).map(schedulingSnapshot),
    kernelCaches: row?.kernelCaches ?? [],
    history: historyLookup(row?.history ?? []),
  };
}

interface SnapshotJson {
  id: string;
  deploymentId: string;
  gpuModel: string;
  driverVersion: string;
  cudaVersion: string;
  status: SchedulingSnapshot["status"];
  bytes: number;
  sleepLevel: number;
  location: string;
}

function schedulingSnapshot(s: SnapshotJson): SchedulingSnapshot {
  return {
    id: s.id,
    deploymentId: s.deploymentId,
    gpuModel: s.gpuModel,
    driverVersion: s.driverVersion,
    cudaVersion: s.cudaVersion,
    status: s.status,
    bytes: s.bytes,
    sleepLevel: Math.min(2, Math.max(0, s.sleepLevel)) as 0 | 1 | 2,
    inStore: s.location === "store",
  };
}

/** History cells of every (path, locality) an option of this deployment can have. */
export async function loadHistoryLookup(
  rows: SqlRows,
  orgId: string,
  deployment: SchedulingDeployment,
): Promise<(path: StartPath, locality: Locality) => HistoryForOption> {
  const [row] = await rows<{ history: HistoryStatJson[] }>(
    Prisma.sql`SELECT (${historyStatsSql(orgId, deployment)}) AS history`,
  );
  return historyLookup(row?.history ?? []);
}

interface HistoryStatJson extends HistoryCell {
  scope: string;
  path: string;
  locality: string;
}

/** One json array of the deployment's history cells (a scalar subquery). */
function historyStatsSql(orgId: string, deployment: SchedulingDeployment): Prisma.Sql {
  const keys = historyCellKeys({
    deploymentId: deployment.id,
    endpointId: deployment.endpointId,
    modelBytes: deployment.modelBytes,
    path: "pull",
    locality: "cold",
  });
  return Prisma.sql`
    SELECT coalesce(json_agg(json_build_object('scope', h.scope, 'path', h.path,
        'locality', h.locality, 'samples', h.samples, 'meanLog', h."meanLog",
        'm2Log', h."m2Log", 'predictionErrorLog', h."predictionErrorLog")), '[]'::json)
    FROM "HistoryStat" h
    JOIN unnest(${keys.map((k) => k.scope)}::"HistoryScope"[],
        ${keys.map((k) => k.scopeKey)}::text[])
      AS k(scope, scope_key) ON h.scope = k.scope AND h."scopeKey" = k.scope_key
    WHERE h."orgId" = ${orgId}::uuid`;
}

function historyLookup(
  stats: HistoryStatJson[],
): (path: StartPath, locality: Locality) => HistoryForOption {
  const cells = new Map<string, HistoryCell>();
  for (const row of stats) {
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
 * warm (or sleeping) replica of it, plus a sample of the others with enough free GPUs.
 *
 * The sample is the first nodes with room at or after a random rank (Node.sampleRank, fixed
 * at creation; wrapping round), read along an index — like Kubernetes' rotating start for
 * percentageOfNodesToScore. It costs a few dozen index entries however large the fleet
 * (sorting the whole fleet at random took 40 ms a decision at 5,000 nodes), and concurrent
 * placements start at different ranks, so they spread instead of colliding.
 */
function shortlistSql(
  orgId: string,
  gpuType: string,
  want: { deploymentId: string; imageDigests: string[]; gpus: number; sample?: number },
): Prisma.Sql {
  // A batch of n replicas needs room for n: sample at least that many cold nodes.
  const limit = Math.max(COLD_NODE_SAMPLE, (want.sample ?? 1) * 2);
  const withRoom = Prisma.sql`n."orgId" = ${orgId}::uuid AND n."gpuModel" = ${gpuType}
    AND n.state = 'ready'
    AND n."gpuCount" - (SELECT count(*) FROM "GpuReservation" g WHERE g."nodeId" = n.id)
      >= ${want.gpus}
    AND n.id NOT IN (SELECT id FROM holding)`;
  return Prisma.sql`
    WITH held AS (
      SELECT i."nodeId" AS id FROM "NodeImage" i WHERE i.digest = ANY(${want.imageDigests})
      UNION
      SELECT c."nodeId" FROM "NodeSnapshot" c JOIN "Snapshot" s ON s.id = c."snapshotId"
        WHERE s."deploymentId" = ${want.deploymentId}::uuid
      UNION
      SELECT p."nodeId" FROM "Replica" p
        WHERE p.state IN ('warm', 'sleeping') AND p."deploymentId" = ${want.deploymentId}::uuid
    ), holding AS (
      SELECT n.id FROM "Node" n JOIN held ON held.id = n.id
      WHERE n."orgId" = ${orgId}::uuid AND n.state = 'ready' AND n."gpuModel" = ${gpuType}
    ), start AS (
      SELECT random() AS rank
    ), sampled AS (
      SELECT id FROM (
        (SELECT n.id FROM "Node" n WHERE n."sampleRank" >= (SELECT rank FROM start)
          AND ${withRoom} ORDER BY n."sampleRank" LIMIT ${limit})
        UNION ALL
        (SELECT n.id FROM "Node" n WHERE n."sampleRank" < (SELECT rank FROM start)
          AND ${withRoom} ORDER BY n."sampleRank" LIMIT ${limit})
      ) AS wrapped LIMIT ${limit}
    )
    SELECT id FROM holding UNION SELECT id FROM sampled`;
}
