import type { DbClient, DbTransaction } from "@thaw/db";
import {
  historyCellKeys,
  updateHistoryStat,
  type HistoryCellKey,
  type Locality,
} from "../scheduling/index.ts";
import type { StartPath } from "../vocabulary/index.ts";
import { chosenOptionOf } from "./options-record.ts";
import { returnReplicaToPending } from "./retry-replica.ts";

// After a cold start closes (ARCHITECTURE.md §3 steps 5–6): a success updates the history cells
// the predictor learns from (deployment, endpoint, fleet bucket) with the measured time and
// the prediction's error; a failure retries the replica with the next-best option, and a
// snapshot that fails to restore SNAPSHOT_QUARANTINE_AFTER times in a row is quarantined.
// Exactly once per cold start: the claim on closedHandledAt makes a re-run a no-op.

export const SNAPSHOT_QUARANTINE_AFTER = 3;

export interface ClosedColdStartHandled {
  handled: boolean;
  /** The replica to place again after a failure. */
  retryReplicaId: string | null;
  quarantinedSnapshotId: string | null;
  /** Set after a success: the snapshot worker decides whether to capture this deployment. */
  succeededDeploymentId?: string;
  /** What the start was, for the scheduler's metrics; set whenever handled. */
  closed?: ClosedColdStartFacts;
}

/** A closed start as the operator's metrics count it (no tenant text, only ids and numbers). */
export interface ClosedColdStartFacts {
  endpointId: string;
  path: StartPath;
  status: "succeeded" | "failed";
  actualSeconds: number | null;
  predictedMeanSeconds: number | null;
  predictedP90Seconds: number | null;
  phases: { phase: string; seconds: number }[];
}

const NOTHING: ClosedColdStartHandled = {
  handled: false,
  retryReplicaId: null,
  quarantinedSnapshotId: null,
};

export async function handleClosedColdStart({
  db,
  coldStartId,
}: {
  db: DbClient;
  coldStartId: string;
}): Promise<ClosedColdStartHandled> {
  return db.$transaction(async (tx) => {
    const { count } = await tx.coldStart.updateMany({
      where: { id: coldStartId, closedHandledAt: null, status: { in: ["succeeded", "failed"] } },
      data: { closedHandledAt: new Date() },
    });
    if (count === 0) return NOTHING;
    const start = await tx.coldStart.findUniqueOrThrow({
      where: { id: coldStartId },
      include: {
        deployment: { select: { modelBytes: true } },
        phases: { select: { phase: true, seconds: true }, orderBy: { sequence: "asc" } },
      },
    });
    const closed: ClosedColdStartFacts = {
      endpointId: start.endpointId,
      path: start.path,
      status: start.status === "succeeded" ? "succeeded" : "failed",
      actualSeconds: start.actualSeconds,
      predictedMeanSeconds: start.predictedMeanSeconds,
      predictedP90Seconds: start.predictedP90Seconds,
      phases: start.phases.flatMap((p) =>
        p.seconds === null ? [] : [{ phase: p.phase, seconds: p.seconds }],
      ),
    };
    const snapshotId = start.path === "restore" ? chosenOptionOf(start.options)?.snapshotId : null;

    if (start.status === "succeeded") {
      if (start.actualSeconds !== null && start.actualSeconds > 0) {
        const keys = historyCellKeys({
          deploymentId: start.deploymentId,
          endpointId: start.endpointId,
          modelBytes: Number(start.deployment.modelBytes),
          path: start.path,
          locality: start.locality as Locality,
        });
        for (const key of keys)
          await observe(tx, start.orgId, key, start.actualSeconds, start.predictedSeconds);
      }
      if (snapshotId)
        await tx.snapshot.updateMany({
          where: { id: snapshotId },
          data: { consecutiveFailures: 0, lastRestoredAt: new Date() },
        });
      return {
        handled: true,
        retryReplicaId: null,
        quarantinedSnapshotId: null,
        succeededDeploymentId: start.deploymentId,
        closed,
      };
    }

    let quarantinedSnapshotId: string | null = null;
    if (snapshotId) {
      const snapshot = await tx.snapshot.update({
        where: { id: snapshotId },
        data: { consecutiveFailures: { increment: 1 } },
        select: { consecutiveFailures: true, status: true },
      });
      if (
        snapshot.consecutiveFailures >= SNAPSHOT_QUARANTINE_AFTER &&
        snapshot.status === "ready"
      ) {
        await tx.snapshot.update({ where: { id: snapshotId }, data: { status: "quarantined" } });
        quarantinedSnapshotId = snapshotId;
      }
    }
    const retried = await returnReplicaToPending(tx, start.replicaId, {
      pendingCause: "start_failed",
      path: start.path,
      phase: start.failedPhase ?? null,
    });
    return {
      handled: true,
      retryReplicaId: retried ? start.replicaId : null,
      quarantinedSnapshotId,
      closed,
    };
  });
}

/** One observation into one HistoryStat cell, under the row's lock (Welford needs the old value). */
async function observe(
  tx: DbTransaction,
  orgId: string,
  key: HistoryCellKey,
  actualSeconds: number,
  predictedSeconds: number,
): Promise<void> {
  const path: StartPath = key.path;
  await tx.$executeRaw`
    INSERT INTO "HistoryStat" (id, "orgId", scope, "scopeKey", path, locality, "updatedAt")
    VALUES (gen_random_uuid(), ${orgId}::uuid, ${key.scope}::"HistoryScope", ${key.scopeKey},
            ${path}::"StartPath", ${key.locality}, now())
    ON CONFLICT ("orgId", scope, "scopeKey", path, locality) DO NOTHING`;
  const [row] = await tx.$queryRaw<
    { id: string; samples: number; meanLog: number; m2Log: number; predictionErrorLog: number }[]
  >`SELECT id::text, samples, "meanLog", "m2Log", "predictionErrorLog" FROM "HistoryStat"
    WHERE "orgId" = ${orgId}::uuid AND scope = ${key.scope}::"HistoryScope"
      AND "scopeKey" = ${key.scopeKey} AND path = ${path}::"StartPath" AND locality = ${key.locality}
    FOR UPDATE`;
  if (!row) throw new Error("history cell vanished under its lock");
  const next = updateHistoryStat(row, actualSeconds, predictedSeconds);
  await tx.historyStat.update({
    where: { id: row.id },
    data: { ...next, lastSeconds: actualSeconds },
  });
}
