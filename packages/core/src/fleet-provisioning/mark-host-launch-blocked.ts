import type { DbClient } from "@thaw/db";
import { replicaReasonSql } from "../placement/replica-reason.ts";

/**
 * The fleet worker could not launch a host for an org's pending replicas of one GPU model
 * (its plan says why: the spend cap, no offering with capacity, the launch limit). Noted on
 * the replicas that wait, where the user looks; they stay demand for the next fleet sweep.
 * Returns how many replicas were marked.
 */
export async function markHostLaunchBlocked({
  db,
  orgId,
  gpuModel,
  blockedBy,
}: {
  db: DbClient;
  orgId: string;
  gpuModel: string;
  /** The plan's reason, as the tenant may read it. */
  blockedBy: string;
}): Promise<number> {
  return db.$executeRaw`
    UPDATE "Replica" r
    SET ${replicaReasonSql({ pendingCause: "host_launch_blocked", gpuModel, blockedBy })}
    FROM "Endpoint" e
    WHERE e.id = r."endpointId" AND r."orgId" = ${orgId}::uuid AND r.state = 'pending'
      AND r."nodeId" IS NULL AND e."gpuType" = ${gpuModel}`;
}
