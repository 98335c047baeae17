import type { DbClient } from "@thaw/db";
import { recordWebhookEvents, type WebhookEvent } from "./record-webhook-event.ts";

/**
 * The webhook events of a closed cold start: `cold_start.succeeded` or `cold_start.failed`,
 * `cold_start.slow` when it took longer than its predicted p90 (the chosen option's, kept on
 * the row at placement), and `snapshot.quarantined` when closing it quarantined a snapshot.
 * Keyed on the start (and the snapshot), so a history job run again records nothing twice.
 */
export async function recordColdStartWebhookEvents({
  db,
  coldStartId,
  quarantinedSnapshotId = null,
}: {
  db: DbClient;
  coldStartId: string;
  quarantinedSnapshotId?: string | null;
}): Promise<string[]> {
  const start = await db.coldStart.findUnique({
    where: { id: coldStartId },
    include: {
      phases: { select: { phase: true, seconds: true }, orderBy: { sequence: "asc" } },
      endpoint: { select: { slug: true } },
    },
  });
  if (!start || (start.status !== "succeeded" && start.status !== "failed")) return [];
  const hasSubscribers = await db.webhookSubscription.findFirst({
    where: { orgId: start.orgId, enabled: true },
    select: { id: true },
  });
  if (!hasSubscribers) return [];
  const slowest = start.phases
    .filter((p) => p.seconds !== null && p.phase !== "ready")
    .sort((a, b) => (b.seconds ?? 0) - (a.seconds ?? 0))[0];
  const data = {
    coldStartId: start.id,
    endpointId: start.endpointId,
    endpointSlug: start.endpoint.slug,
    deploymentId: start.deploymentId,
    replicaId: start.replicaId,
    nodeId: start.nodeId,
    attempt: start.attempt,
    path: start.path,
    locality: start.locality,
    status: start.status,
    actualSeconds: start.actualSeconds,
    predictedSeconds: start.predictedSeconds,
    predictedP90Seconds: start.predictedP90Seconds,
    slowestPhase: slowest ? { phase: slowest.phase, seconds: slowest.seconds } : null,
    requestedAt: start.requestedAt.toISOString(),
    readyAt: start.readyAt?.toISOString() ?? null,
    ...(start.status === "failed" && { error: start.error, failedPhase: start.failedPhase }),
  };
  const at = start.finishedAt ?? start.readyAt ?? new Date();
  const events: WebhookEvent[] = [
    { orgId: start.orgId, type: `cold_start.${start.status}`, key: start.id, data, at },
  ];
  if (
    start.status === "succeeded" &&
    start.actualSeconds !== null &&
    start.predictedP90Seconds !== null &&
    start.actualSeconds > start.predictedP90Seconds
  )
    events.push({ orgId: start.orgId, type: "cold_start.slow", key: start.id, data, at });
  if (quarantinedSnapshotId) {
    const snapshot = await db.snapshot.findUnique({ where: { id: quarantinedSnapshotId } });
    if (snapshot)
      events.push({
        orgId: snapshot.orgId,
        type: "snapshot.quarantined",
        key: snapshot.id,
        data: {
          snapshotId: snapshot.id,
          deploymentId: snapshot.deploymentId,
          endpointId: start.endpointId,
          gpuModel: snapshot.gpuModel,
          consecutiveFailures: snapshot.consecutiveFailures,
          lastColdStartId: start.id,
        },
      });
  }
  return recordWebhookEvents(db, events);
}
