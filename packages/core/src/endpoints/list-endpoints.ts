import type { Db } from "@thaw/db";
import { z } from "zod";
import { loadColdStartSummaries } from "../analytics/load-cold-start-summaries.ts";
import { TimeToReadySummary } from "../analytics/summarize-time-to-ready.ts";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { Objective, StartPath } from "../vocabulary/index.ts";

/** A row of the dashboard's endpoints table. */
export const EndpointTableRow = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  gpuType: z.string(),
  gpuCount: z.number(),
  minReplicas: z.number(),
  maxReplicas: z.number(),
  desiredReplicas: z.number(),
  allowedPaths: z.array(StartPath),
  objective: Objective,
  replicas: z.object({ ready: z.number(), warm: z.number(), starting: z.number() }),
  coldStarts: TimeToReadySummary,
  activeDeployment: z
    .object({
      id: z.string(),
      version: z.number(),
      imageRef: z.string(),
      imageBytes: z.number(),
      modelSource: z.string(),
      modelBytes: z.number(),
      modelFormat: z.string(),
      engine: z.string(),
    })
    .nullable(),
});
export const EndpointTable = z.array(EndpointTableRow);
export type EndpointTable = z.infer<typeof EndpointTable>;

/**
 * The endpoints table of the dashboard: configuration, active deployment, replica counts and
 * the headline cold-start figures (p50 / p95 time to ready, path mix, last cold start) —
 * each a set-based query over all the org's endpoints, never one per endpoint.
 */
export async function listEndpoints({
  actor,
  db,
}: {
  actor: Actor;
  db: Db;
}): Promise<EndpointTable> {
  assertCan(actor, "endpoints:read");
  const endpoints = await db.endpoint.findMany({
    where: { ...orgScope(actor), deletedAt: null },
    orderBy: { createdAt: "asc" },
    take: 500,
    include: {
      activeDeployment: {
        select: {
          id: true,
          version: true,
          imageRef: true,
          imageBytes: true,
          modelSource: true,
          modelBytes: true,
          modelFormat: true,
          engine: true,
        },
      },
    },
  });
  const ids = endpoints.map((e) => e.id);
  const [replicaCounts, summaries] = await Promise.all([
    db.replica.groupBy({
      by: ["endpointId", "state"],
      where: { ...orgScope(actor), endpointId: { in: ids } },
      _count: { _all: true },
    }),
    loadColdStartSummaries(db, actor.orgId, ids),
  ]);
  return endpoints.map((e) => {
    const counts = replicaCounts.filter((c) => c.endpointId === e.id);
    const count = (state: string) => counts.find((c) => c.state === state)?._count._all ?? 0;
    const d = e.activeDeployment;
    return {
      id: e.id,
      slug: e.slug,
      name: e.name,
      gpuType: e.gpuType,
      gpuCount: e.gpuCount,
      minReplicas: e.minReplicas,
      maxReplicas: e.maxReplicas,
      desiredReplicas: e.desiredReplicas,
      allowedPaths: e.allowedPaths,
      objective: e.objective,
      replicas: {
        ready: count("ready"),
        warm: count("warm"),
        starting: count("pending") + count("placed") + count("starting"),
      },
      coldStarts: summaries.get(e.id)!,
      activeDeployment: d && {
        id: d.id,
        version: d.version,
        imageRef: d.imageRef,
        imageBytes: Number(d.imageBytes),
        modelSource: d.modelSource,
        modelBytes: Number(d.modelBytes),
        modelFormat: d.modelFormat,
        engine: d.engine,
      },
    };
  });
}
