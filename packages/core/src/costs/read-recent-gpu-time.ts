import { Prisma, type DbClient } from "@thaw/db";
import type { GpuTimeCategory } from "./get-gpu-cost.ts";
import { gpuTimeSpans } from "./gpu-time-spans.ts";

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
  // One instant for both bounds and every clip, as the database sees it.
  const now = Prisma.sql`statement_timestamp()::timestamp`;
  const since = Prisma.sql`(statement_timestamp()::timestamp - make_interval(secs => ${windowSeconds}))`;
  return db.$queryRaw<RecentGpuTime[]>(Prisma.sql`
    WITH spans AS (${gpuTimeSpans({ since, until: now })})
    SELECT category,
      coalesce(sum(gpus * extract(epoch FROM least(e, ${now}) - greatest(s, ${since}))), 0)::float8 AS "gpuSeconds",
      coalesce(sum(gpus * price / 3600 * extract(epoch FROM least(e, ${now}) - greatest(s, ${since}))), 0)::float8 AS usd
    FROM spans WHERE gpus > 0 AND e > ${since} AND s < ${now}
    GROUP BY category`);
}
