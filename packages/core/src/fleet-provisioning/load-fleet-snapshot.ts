import type { Db } from "@thaw/db";
import { GPU_HOLDING_REPLICA_STATES, type ReplicaPendingCause } from "../vocabulary/index.ts";
import type { FleetHost, PendingDemand } from "./plan-fleet-change.ts";

/**
 * Pending replicas that want a host: placement found no room for them, or the fleet worker
 * could not launch one yet. A replica sent back to pending after a failed start is not
 * demand until placement has tried it again.
 */
export const PENDING_CAUSES_WANTING_HOSTS: readonly ReplicaPendingCause[] = [
  "waiting_for_capacity",
  "host_launch_blocked",
];

/**
 * What planFleetChange needs for one org and provider, read in three queries: the hosts Thaw
 * launched (with what they hold and since when they are idle), the GPUs wanted by replicas
 * that placement has tried and could not place, net of GPUs still free on ready nodes (the
 * next placement pass takes those), and the org's spend cap.
 */
export async function loadFleetSnapshot({
  db,
  orgId,
  provider,
  pendingGraceSeconds = 0,
}: {
  db: Db;
  orgId: string;
  provider: "aws" | "sim";
  /** Replicas created less than this ago are not demand yet. */
  pendingGraceSeconds?: number;
}): Promise<{ hosts: FleetHost[]; pending: PendingDemand[]; spendCapUsdPerHour: number | null }> {
  const [hosts, pending, org] = await Promise.all([
    db.$queryRaw<
      {
        id: string;
        gpuModel: string;
        gpuCount: number;
        state: FleetHost["state"];
        price: number | null;
        replicas: number;
        idleSince: Date;
      }[]
    >`
      SELECT n.id, n."gpuModel", n."gpuCount", n.state::text AS state, n."hourlyPriceUsd" AS price,
             count(r.id) FILTER (WHERE r.state = ANY(${[...GPU_HOLDING_REPLICA_STATES]}::"ReplicaState"[]))::int AS replicas,
             greatest(n."createdAt", max(coalesce(r."stoppedAt", r."updatedAt"))) AS "idleSince"
      FROM "Node" n LEFT JOIN "Replica" r ON r."nodeId" = n.id
      WHERE n."orgId" = ${orgId}::uuid AND n.provider = ${provider}::"NodeProvider"
        AND n.provisioned AND n.state <> 'terminated'
      GROUP BY n.id`,
    db.$queryRaw<{ gpuModel: string; wanted: number; free: number }[]>`
      WITH wanted AS (
        SELECT e."gpuType" AS gpu, sum(e."gpuCount")::int AS gpus
        FROM "Replica" r JOIN "Endpoint" e ON e.id = r."endpointId"
        WHERE r."orgId" = ${orgId}::uuid AND r.state = 'pending' AND r."nodeId" IS NULL
          AND r."pendingCause" = ANY(${PENDING_CAUSES_WANTING_HOSTS}::"ReplicaPendingCause"[])
          AND e."deletedAt" IS NULL
          AND r."createdAt" < now() - make_interval(secs => ${pendingGraceSeconds})
        GROUP BY e."gpuType"
      ), free AS (
        SELECT n."gpuModel" AS gpu,
               sum(n."gpuCount" - (SELECT count(*) FROM "GpuReservation" g WHERE g."nodeId" = n.id))::int AS gpus
        FROM "Node" n
        WHERE n."orgId" = ${orgId}::uuid AND n.state = 'ready'
        GROUP BY n."gpuModel"
      )
      SELECT w.gpu AS "gpuModel", w.gpus AS wanted, coalesce(f.gpus, 0) AS free
      FROM wanted w LEFT JOIN free f ON f.gpu = w.gpu`,
    db.org.findUnique({ where: { id: orgId }, select: { spendCapUsdPerHour: true } }),
  ]);
  return {
    hosts: hosts.map((h) => ({
      nodeId: h.id,
      gpuModel: h.gpuModel,
      gpus: h.gpuCount,
      state: h.state,
      priceUsdPerHour: h.price ?? 0,
      replicas: h.replicas,
      idleSinceSeconds: h.replicas > 0 ? null : h.idleSince.getTime() / 1000,
    })),
    pending: pending
      .map((p) => ({ gpuModel: p.gpuModel, gpus: Math.max(0, p.wanted - p.free) }))
      .filter((p) => p.gpus > 0),
    spendCapUsdPerHour: org?.spendCapUsdPerHour ?? null,
  };
}

/** Orgs with replicas waiting for capacity or with hosts Thaw launched (the fleet sweep). */
export async function listFleetOrgs({
  db,
  provider,
}: {
  db: Db;
  provider: "aws" | "sim";
}): Promise<string[]> {
  const rows = await db.$queryRaw<{ orgId: string }[]>`
    SELECT DISTINCT "orgId" FROM "Replica" WHERE state = 'pending' AND "nodeId" IS NULL
      AND "pendingCause" = ANY(${PENDING_CAUSES_WANTING_HOSTS}::"ReplicaPendingCause"[])
    UNION
    SELECT DISTINCT "orgId" FROM "Node"
      WHERE provider = ${provider}::"NodeProvider" AND provisioned AND state <> 'terminated'`;
  return rows.map((r) => r.orgId);
}

/** Node rows the garbage collector reconciles with the provider's instances. */
export async function loadGarbageNodes({
  db,
  provider,
  instanceNodeIds,
}: {
  db: Db;
  provider: "aws" | "sim";
  instanceNodeIds: readonly string[];
}) {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const rows = await db.node.findMany({
    where: {
      provider,
      provisioned: true,
      OR: [
        { state: { not: "terminated" } },
        { id: { in: instanceNodeIds.filter((id) => uuid.test(id)) } },
      ],
    },
    select: { id: true, instanceId: true, state: true, createdAt: true },
  });
  return rows.map((n) => ({
    nodeId: n.id,
    instanceId: n.instanceId,
    state: n.state,
    createdAtSeconds: n.createdAt.getTime() / 1000,
  }));
}

/** Carries out the adoptions planFleetGarbage decided (the terminations are the provider's). */
export async function adoptInstances({
  db,
  adopt,
}: {
  db: Db;
  adopt: readonly { nodeId: string; instanceId: string }[];
}): Promise<void> {
  for (const { nodeId, instanceId } of adopt) {
    await db.node.updateMany({ where: { id: nodeId, instanceId: null }, data: { instanceId } });
  }
}
