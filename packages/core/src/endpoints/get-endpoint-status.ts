import type { Db } from "@thaw/db";
import { loadRecentClosedStarts } from "../analytics/load-cold-start-summaries.ts";
import { loadPredictionCalibration } from "../analytics/load-prediction-calibration.ts";
import { summarizeTimeToReady } from "../analytics/summarize-time-to-ready.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { findEndpoint } from "./find-endpoint.ts";

/**
 * What an autoscaler (KEDA's metrics-api scaler, a script) reads: desired vs actual replicas
 * by state, the bounds, recent time-to-ready and how well its predictions' intervals held.
 */
export async function getEndpointStatus({
  actor,
  endpoint,
  db,
}: {
  actor: Actor;
  endpoint: string;
  db: Db;
}) {
  assertCan(actor, "endpoints:read");
  const row = await findEndpoint(db, actor, endpoint);
  const [byState, recent, predictionCalibration] = await Promise.all([
    db.replica.groupBy({
      by: ["state"],
      where: { endpointId: row.id, state: { not: "stopped" } },
      _count: true,
    }),
    loadRecentClosedStarts(db, actor.orgId, [row.id]).then((windows) => windows.get(row.id)!),
    loadPredictionCalibration(db, actor.orgId, row.id),
  ]);
  const count = (state: string) => byState.find((s) => s.state === state)?._count ?? 0;
  // The dashboard's figures, from the same window and the same summary.
  const timeToReady = summarizeTimeToReady(recent);
  const last = recent[0];
  return {
    endpoint: { id: row.id, slug: row.slug },
    desiredReplicas: row.desiredReplicas,
    minReplicas: row.minReplicas,
    maxReplicas: row.maxReplicas,
    replicas: {
      ready: count("ready"),
      starting: count("placed") + count("starting"),
      pending: count("pending"),
      warm: count("warm"),
      draining: count("draining"),
      failed: count("failed"),
    },
    timeToReadySeconds: {
      p50: timeToReady.p50Seconds,
      p95: timeToReady.p95Seconds,
      samples: timeToReady.samples,
    },
    predictionCalibration,
    lastColdStart: last
      ? { path: last.path, status: last.status, requestedAt: last.requestedAt.toISOString() }
      : null,
  };
}
