import type { Db } from "@thaw/db";
import { loadPredictionCalibration } from "../analytics/load-prediction-calibration.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { findEndpoint } from "./find-endpoint.ts";

/** Starts behind the p50 / p95 time-to-ready figures. */
const RECENT_STARTS = 100;

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
    db.coldStart.findMany({
      where: { endpointId: row.id, status: { in: ["succeeded", "failed"] } },
      orderBy: { requestedAt: "desc" },
      take: RECENT_STARTS,
      select: { path: true, status: true, actualSeconds: true, requestedAt: true },
    }),
    loadPredictionCalibration(db, actor.orgId, row.id),
  ]);
  const count = (state: string) => byState.find((s) => s.state === state)?._count ?? 0;
  const times = recent
    .filter((c) => c.status === "succeeded" && c.actualSeconds !== null)
    .map((c) => c.actualSeconds!)
    .sort((a, b) => a - b);
  const quantile = (q: number) =>
    times.length === 0 ? null : times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
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
    timeToReadySeconds: { p50: quantile(0.5), p95: quantile(0.95), samples: times.length },
    predictionCalibration,
    lastColdStart: last
      ? { path: last.path, status: last.status, requestedAt: last.requestedAt.toISOString() }
      : null,
  };
}
