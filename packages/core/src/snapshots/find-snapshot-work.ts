import type { DbClient } from "@thaw/db";

/**
 * For the periodic sweep: active deployments with a ready replica and no ready snapshot on
 * the GPU/driver/CUDA of that replica's node, plus those with a capture in progress (a lost
 * job resumes). One query; the decision itself runs in the snapshot worker.
 */
export async function findSnapshotWork({ db }: { db: DbClient }): Promise<string[]> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    SELECT DISTINCT r."deploymentId"::text AS id
    FROM "Replica" r
    JOIN "Endpoint" e ON e."activeDeploymentId" = r."deploymentId" AND e."deletedAt" IS NULL
    JOIN "Node" n ON n.id = r."nodeId"
    WHERE r.state = 'ready' AND 'restore' = ANY(e."allowedPaths")
      AND n."driverVersion" IS NOT NULL AND n."cudaVersion" IS NOT NULL
      AND NOT EXISTS (
        SELECT 1 FROM "Snapshot" s
        WHERE s."deploymentId" = r."deploymentId" AND s.status IN ('ready', 'capturing')
          AND s."gpuModel" = n."gpuModel" AND s."driverVersion" = n."driverVersion"
          AND s."cudaVersion" = n."cudaVersion")
    UNION
    SELECT DISTINCT "deploymentId"::text FROM "Snapshot" WHERE status = 'capturing'`;
  return rows.map((r) => r.id);
}
