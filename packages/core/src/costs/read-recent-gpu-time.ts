import type { DbClient } from "@thaw/db";
import type { GpuTimeCategory } from "./get-gpu-cost.ts";

// The whole fleet's GPU time of the last `windowSeconds` by category, for the operator's
// Prometheus gauges (the scheduler's /metrics): closed ledger intervals clipped to the window
// plus the replicas' open ones. Across every org on purpose, and labelled by category only.

export interface RecentGpuTime {
  category: GpuTimeCategory;
  gpuSeconds: number;
  /** Dollars at the hosts' prices (time on hosts without a price adds nothing). */
  usd: number;
}

export async function readRecentGpuTime({
  db,
  windowSeconds,
}: {
  db: DbClient;
  windowSeconds: number;
}): Promise<RecentGpuTime[]> {
  return db.$queryRaw<RecentGpuTime[]>`
    WITH bounds AS (SELECT statement_timestamp()::timestamp AS now,
        statement_timestamp()::timestamp - make_interval(secs => ${windowSeconds}) AS since),
    spans AS (
      SELECT t.category::text AS category, t.gpus, t."usdPerGpuHour" AS price,
        t."startedAt" AS s, t."endedAt" AS e
      FROM "GpuTime" t, bounds WHERE t."endedAt" > bounds.since
      UNION ALL
      SELECT CASE WHEN r.state IN ('placed', 'starting') THEN 'starting'
               WHEN r.state = 'ready' AND r.prewarm THEN 'warm_idle'
               WHEN r.state = 'ready' THEN 'serving'
               WHEN r.state = 'warm' THEN 'warm_idle'
               ELSE 'stopping' END,
        (SELECT count(*) FROM "GpuReservation" g WHERE g."replicaId" = r.id)::int,
        (SELECT n."hourlyPriceUsd" / NULLIF(n."gpuCount", 0) FROM "Node" n WHERE n.id = r."nodeId"),
        r."stateSince", bounds.now
      FROM "Replica" r, bounds
      WHERE r.state IN ('placed', 'starting', 'ready', 'warm', 'draining')
    )
    SELECT category,
      coalesce(sum(gpus * extract(epoch FROM least(e, bounds.now) - greatest(s, bounds.since))), 0)::float8 AS "gpuSeconds",
      coalesce(sum(gpus * price / 3600 * extract(epoch FROM least(e, bounds.now) - greatest(s, bounds.since))), 0)::float8 AS usd
    FROM spans, bounds WHERE gpus > 0 AND e > bounds.since AND s < bounds.now
    GROUP BY category`;
}
