import { directSql, Prisma, type DbClient } from "@thaw/db";
import { uuidV7 } from "../placement/uuid-v7.ts";
import { kernelCacheRefFor } from "./kernel-cache-ref.ts";

// Dispatch of a start that will compile with no stored cache for its node's GPU and driver
// claims the capture: one start per deployment × GPU model × driver is told to push what it
// compiles. A claim whose start failed or was cancelled, or that was never reported within
// CLAIM_EXPIRES (the capture failed after ready, the agent died), is taken over by the next
// such start; a stored (`ready`) cache is never replaced here.

/** A start that takes longer than this to come up and push its cache loses its claim. */
export const KERNEL_CACHE_CLAIM_EXPIRES_MINUTES = 60;

export interface KernelCacheClaim {
  kernelCacheId: string;
  /** The tag the agent pushes to. */
  ref: string;
}

export async function claimKernelCacheCapture({
  db,
  store,
  orgId,
  deploymentId,
  gpuModel,
  driverVersion,
  coldStartId,
  nodeId,
}: {
  db: DbClient;
  /** THAW_SNAPSHOT_REGISTRY. */
  store: string;
  orgId: string;
  deploymentId: string;
  gpuModel: string;
  driverVersion: string;
  coldStartId: string;
  nodeId: string;
}): Promise<KernelCacheClaim | null> {
  const id = uuidV7();
  const ref = kernelCacheRefFor(store, { orgId, deploymentId, kernelCacheId: id });
  const [claimed] = await directSql(db).rows<{ id: string; uri: string }>(Prisma.sql`
    INSERT INTO "KernelCache" (id, "orgId", "deploymentId", "gpuModel", "driverVersion",
      status, uri, "coldStartId", "sourceNodeId", "updatedAt")
    VALUES (${id}::uuid, ${orgId}::uuid, ${deploymentId}::uuid, ${gpuModel}, ${driverVersion},
      'capturing', ${ref}, ${coldStartId}::uuid, ${nodeId}::uuid, now())
    ON CONFLICT ("deploymentId", "gpuModel", "driverVersion") DO UPDATE
      SET "coldStartId" = EXCLUDED."coldStartId", "sourceNodeId" = EXCLUDED."sourceNodeId",
        "updatedAt" = now()
      WHERE "KernelCache".status = 'capturing' AND "KernelCache"."orgId" = EXCLUDED."orgId"
        AND ("KernelCache"."updatedAt" <
              now() - make_interval(mins => ${KERNEL_CACHE_CLAIM_EXPIRES_MINUTES})
          OR NOT EXISTS (SELECT 1 FROM "ColdStart" c WHERE c.id = "KernelCache"."coldStartId"
            AND c.status IN ('scheduled', 'dispatched', 'running', 'succeeded')))
    RETURNING id::text, uri`);
  return claimed ? { kernelCacheId: claimed.id, ref: claimed.uri } : null;
}
