import { Prisma } from "@thaw/db";

// The GPU-time intervals a report adds up, as one SQL row source with the columns
// ("endpointId", category, path, gpus, price, s, e): the closed ones from the GpuTime ledger
// that overlap [since, until), and every replica's open one (the state it is in, since
// stateSince, up to `until`), categorised exactly as the ledger's trigger categorises a state
// when it is left (migration 20261127002753_gpu_time). Shared by the cost reports and the
// operator's metrics, so the two cannot count differently.

export function gpuTimeSpans(o: {
  since: Prisma.Sql;
  until: Prisma.Sql;
  /** One org's (a report's); absent: the whole fleet's (the operator's metrics). */
  orgId?: string;
  /** One endpoint's, within the org. */
  endpointId?: string | null;
}): Prisma.Sql {
  const and = (alias: "t" | "r") => {
    const column = (name: string) => Prisma.raw(`${alias}."${name}"`);
    return Prisma.sql`${o.orgId ? Prisma.sql`AND ${column("orgId")} = ${o.orgId}::uuid` : Prisma.empty}
      ${o.endpointId ? Prisma.sql`AND ${column("endpointId")} = ${o.endpointId}::uuid` : Prisma.empty}`;
  };
  return Prisma.sql`
    SELECT t."endpointId", t.category::text AS category, t.path::text AS path, t.gpus,
      t."usdPerGpuHour" AS price, t."startedAt" AS s, t."endedAt" AS e
    FROM "GpuTime" t
    WHERE t."endedAt" > ${o.since} AND t."startedAt" < ${o.until} ${and("t")}
    UNION ALL
    SELECT r."endpointId",
      CASE WHEN r.state IN ('placed', 'starting') THEN 'starting'
           WHEN r.state = 'ready' AND r.prewarm THEN 'warm_idle'
           WHEN r.state = 'ready' THEN 'serving'
           WHEN r.state = 'warm' THEN 'warm_idle'
           ELSE 'stopping' END,
      CASE WHEN r.state IN ('placed', 'starting') THEN
        (SELECT c.path::text FROM "ColdStart" c WHERE c."replicaId" = r.id
         ORDER BY c.attempt DESC LIMIT 1) END,
      (SELECT count(*) FROM "GpuReservation" g WHERE g."replicaId" = r.id)::int,
      (SELECT n."hourlyPriceUsd" / NULLIF(n."gpuCount", 0) FROM "Node" n WHERE n.id = r."nodeId"),
      r."stateSince", ${o.until}
    FROM "Replica" r
    WHERE r.state IN ('placed', 'starting', 'ready', 'warm', 'draining')
      AND r."stateSince" < ${o.until} ${and("r")}`;
}
