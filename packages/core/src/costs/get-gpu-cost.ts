import { Prisma, prismaRows, type Db } from "@thaw/db";
import { z } from "zod";
import { assertCan, type Actor } from "../auth/index.ts";
import { findEndpoint } from "../endpoints/find-endpoint.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { StartPath } from "../vocabulary/index.ts";
import { gpuTimeSpans } from "./gpu-time-spans.ts";

// What an endpoint's (or an org's) GPUs were doing, and what that cost: GPU-seconds split into
// serving, starting (by path), held idle for a warm handover, burnt by failed starts, and
// stopping — from the GpuTime ledger the database writes at every replica state change (its
// trigger, migration 20261127002753_gpu_time) plus each replica's open interval up to now.
// Priced at each host's price per GPU (the fleet config's on-demand price of its offering);
// time on hosts without a price is counted and reported as unpriced.

export const GpuTimeCategory = z.enum(["serving", "starting", "warm_idle", "failed", "stopping"]);
export type GpuTimeCategory = z.infer<typeof GpuTimeCategory>;

const MAX_WINDOW_SECONDS = 31 * 24 * 3600;
const MAX_BUCKETS = 24 * 31;

export const GpuCostQuery = z
  .object({
    /** ISO time; default: the start of the hour 23 hours before `to`'s (bucket=day: of the UTC day 6 days before). */
    from: z.iso.datetime({ offset: true }).optional(),
    /** ISO time; default: now. */
    to: z.iso.datetime({ offset: true }).optional(),
    bucket: z.enum(["hour", "day"]).default("hour"),
  })
  .strict();

/** The dashboard's: one endpoint's report (tRPC analytics.endpointCost). */
export const GetEndpointGpuCostInput = GpuCostQuery.extend({
  endpoint: z.string().min(1).max(100),
}).strict();

const CategorySeconds = z.object({
  serving: z.number(),
  starting: z.number(),
  warm_idle: z.number(),
  failed: z.number(),
  stopping: z.number(),
});

export const GpuCostReport = z.object({
  from: z.string(),
  to: z.string(),
  bucket: z.enum(["hour", "day"]),
  /** GPU-seconds per category over the window; `total` sums them. */
  gpuSeconds: CategorySeconds.extend({ total: z.number() }),
  /** US dollars per category, at each host's price per GPU-hour. */
  usd: CategorySeconds.extend({ total: z.number() }),
  /** GPU-seconds on hosts without a price (not in `usd`). */
  unpricedGpuSeconds: z.number(),
  /** Starting and failed GPU-seconds by start path. */
  startsByPath: z.array(
    z.object({ path: StartPath, startingGpuSeconds: z.number(), failedGpuSeconds: z.number() }),
  ),
  /** GPU-seconds per bucket and category, oldest first (every bucket, zeros included). */
  series: z.array(CategorySeconds.extend({ at: z.string() })),
  /** The org's report only: each endpoint's totals, dearest first. */
  endpoints: z
    .array(
      z.object({
        endpointId: z.string(),
        slug: z.string(),
        gpuSeconds: z.number(),
        usd: z.number(),
      }),
    )
    .optional(),
});
export type GpuCostReport = z.infer<typeof GpuCostReport>;

const zeros = () => ({ serving: 0, starting: 0, warm_idle: 0, failed: 0, stopping: 0 });

interface Row {
  at: Date;
  endpointId: string;
  category: GpuTimeCategory;
  path: StartPath | null;
  gpuSeconds: number;
  usd: number | null;
}

/** What both reports take: the query (from, to, bucket) and where it came from, for errors. */
interface GpuCostArgs {
  actor: Actor;
  input?: unknown;
  db: Db;
  now?: Date;
  where?: string;
}

/** An org's GPU time and cost (REST GET /api/v1/cost; the org's cost card). */
export async function getOrgGpuCost(args: GpuCostArgs): Promise<GpuCostReport> {
  assertCan(args.actor, "endpoints:read");
  return gpuCost({ ...args, endpointId: null });
}

/** One endpoint's GPU time and cost (REST GET /api/v1/endpoints/{endpoint}/cost; its page). */
export async function getEndpointGpuCost(
  args: GpuCostArgs & { endpoint: unknown },
): Promise<GpuCostReport> {
  assertCan(args.actor, "endpoints:read");
  const found = await findEndpoint(args.db, args.actor, args.endpoint);
  return gpuCost({ ...args, endpointId: found.id });
}

async function gpuCost({
  actor,
  input,
  db,
  now = new Date(),
  where = "query",
  endpointId,
}: GpuCostArgs & { endpointId: string | null }): Promise<GpuCostReport> {
  const query = parseInput(GpuCostQuery, input ?? {}, where);
  const to = query.to ? new Date(query.to) : now;
  const bucketSeconds = query.bucket === "day" ? 86_400 : 3_600;
  // By default the last 24 hours (7 days by day), from a whole hour (UTC day), so the buckets
  // are clock hours (days) and the last one is the current, partial one.
  const defaultBuckets = query.bucket === "day" ? 7 : 24;
  const from = query.from
    ? new Date(query.from)
    : new Date(
        (Math.floor(to.getTime() / (bucketSeconds * 1000)) - (defaultBuckets - 1)) *
          bucketSeconds *
          1000,
      );
  const windowSeconds = (to.getTime() - from.getTime()) / 1000;
  // Well-formed times that make no window: 422, as a schema-valid request is never a 400.
  for (const [name, at] of [
    ["from", from],
    ["to", to],
  ] as const)
    if (at.getTime() < 0)
      throw new AppError("UNPROCESSABLE", `${name} must be after 1970.`, {
        field: `${where}.${name}`,
      });
  if (!(windowSeconds > 0))
    throw new AppError("UNPROCESSABLE", "from must be before to.", { field: `${where}.from` });
  if (windowSeconds > MAX_WINDOW_SECONDS || windowSeconds / bucketSeconds > MAX_BUCKETS)
    throw new AppError(
      "UNPROCESSABLE",
      `The window is at most 31 days and ${MAX_BUCKETS} buckets; ask for bucket=day or a shorter window.`,
      { field: `${where}.from` },
    );
  // Open intervals end now, never after it (a window reaching into the future counts nothing there).
  const until = to < now ? to : now;
  const orgId = actor.orgId;

  const rows = await prismaRows(db)<Row>(Prisma.sql`
    WITH spans AS (${gpuTimeSpans({
      since: Prisma.sql`${from}::timestamp`,
      until: Prisma.sql`${until}::timestamp`,
      orgId,
      endpointId,
    })}
    ), buckets AS (
      SELECT b FROM generate_series(${from}::timestamp, ${to}::timestamp - interval '1 millisecond',
        make_interval(secs => ${bucketSeconds})) AS b
    )
    SELECT b AS at, spans."endpointId"::text AS "endpointId", spans.category, spans.path,
      sum(spans.gpus * extract(epoch FROM
        least(spans.e, b + make_interval(secs => ${bucketSeconds}), ${to}::timestamp)
        - greatest(spans.s, b, ${from}::timestamp)))::float8 AS "gpuSeconds",
      sum(spans.gpus * spans.price / 3600 * extract(epoch FROM
        least(spans.e, b + make_interval(secs => ${bucketSeconds}), ${to}::timestamp)
        - greatest(spans.s, b, ${from}::timestamp)))::float8 AS usd
    FROM buckets JOIN spans
      ON spans.gpus > 0 AND spans.s < least(b + make_interval(secs => ${bucketSeconds}), ${to}::timestamp)
        AND spans.e > greatest(b, ${from}::timestamp)
    GROUP BY 1, 2, 3, 4
    ORDER BY 1`);

  const gpuSeconds = { ...zeros(), total: 0 };
  const usd = { ...zeros(), total: 0 };
  let unpricedGpuSeconds = 0;
  const byPath = new Map<StartPath, { startingGpuSeconds: number; failedGpuSeconds: number }>();
  const byEndpoint = new Map<string, { gpuSeconds: number; usd: number }>();
  const series = new Map<number, ReturnType<typeof zeros>>();
  for (let t = from.getTime(); t < to.getTime(); t += bucketSeconds * 1000) series.set(t, zeros());
  for (const row of rows) {
    const seconds = row.gpuSeconds;
    gpuSeconds[row.category] += seconds;
    gpuSeconds.total += seconds;
    if (row.usd === null) unpricedGpuSeconds += seconds;
    else {
      usd[row.category] += row.usd;
      usd.total += row.usd;
    }
    if (row.path && (row.category === "starting" || row.category === "failed")) {
      const entry = byPath.get(row.path) ?? { startingGpuSeconds: 0, failedGpuSeconds: 0 };
      if (row.category === "starting") entry.startingGpuSeconds += seconds;
      else entry.failedGpuSeconds += seconds;
      byPath.set(row.path, entry);
    }
    const endpoint = byEndpoint.get(row.endpointId) ?? { gpuSeconds: 0, usd: 0 };
    endpoint.gpuSeconds += seconds;
    endpoint.usd += row.usd ?? 0;
    byEndpoint.set(row.endpointId, endpoint);
    const bucket = series.get(row.at.getTime());
    if (bucket) bucket[row.category] += seconds;
  }

  let endpoints: GpuCostReport["endpoints"];
  if (!endpointId) {
    const slugs = new Map(
      (
        await db.endpoint.findMany({
          where: { orgId, id: { in: [...byEndpoint.keys()] } },
          select: { id: true, slug: true },
        })
      ).map((e) => [e.id, e.slug]),
    );
    endpoints = [...byEndpoint]
      .map(([id, totals]) => ({ endpointId: id, slug: slugs.get(id) ?? "", ...totals }))
      .sort((a, b) => b.usd - a.usd || b.gpuSeconds - a.gpuSeconds);
  }
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    bucket: query.bucket,
    gpuSeconds,
    usd,
    unpricedGpuSeconds,
    startsByPath: StartPath.options
      .filter((p) => byPath.has(p))
      .map((path) => ({ path, ...byPath.get(path)! })),
    series: [...series].map(([t, values]) => ({ at: new Date(t).toISOString(), ...values })),
    ...(endpoints ? { endpoints } : {}),
  };
}
