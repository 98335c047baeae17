import { Prisma, type SqlRows } from "@thaw/db";
import type { StoredKernelCache } from "../scheduling/index.ts";

/** A deployment's stored kernel caches (one per GPU model and driver), for placement. */
export async function loadKernelCaches(
  rows: SqlRows,
  orgId: string,
  deploymentId: string,
): Promise<StoredKernelCache[]> {
  return rows<StoredKernelCache>(Prisma.sql`
    SELECT id::text, "gpuModel", "driverVersion", bytes::float8 AS bytes
    FROM "KernelCache"
    WHERE "orgId" = ${orgId}::uuid AND "deploymentId" = ${deploymentId}::uuid
      AND status = 'ready' AND digest IS NOT NULL`);
}
