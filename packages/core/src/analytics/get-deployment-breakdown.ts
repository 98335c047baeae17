import type { Db } from "@thaw/db";
import { z } from "zod";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import type { ColdStartSample } from "./cold-start-sample.ts";
import { DeploymentStatus } from "../vocabulary/index.ts";
import { HOST_CEILINGS_SELECT, hostCeilings } from "./bottleneck-hints.ts";
import { ColdStartBreakdown, coldStartBreakdown } from "./cold-start-breakdown.ts";

export const GetDeploymentBreakdownInput = z
  .object({
    deploymentId: z.uuid(),
    /** The most recent cold starts of the deployment to break down. */
    limit: z.number().int().min(1).max(500).default(200),
  })
  .strict();

/** One deployment's cold-start figures, with which deployment they are of. */
export const DeploymentBreakdown = ColdStartBreakdown.extend({
  deployment: z.object({
    id: z.string(),
    version: z.number(),
    status: DeploymentStatus,
    endpointSlug: z.string(),
  }),
});
export type DeploymentBreakdown = z.infer<typeof DeploymentBreakdown>;

/**
 * Where every second of one deployment's recent cold starts went (analytics/
 * cold-start-breakdown.ts). Another org's deployment is NOT_FOUND.
 */
export async function getDeploymentBreakdown({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: unknown;
  db: Db;
}): Promise<DeploymentBreakdown> {
  assertCan(actor, "endpoints:read");
  const { deploymentId, limit } = parseInput(GetDeploymentBreakdownInput, input);
  const deployment = await db.deployment.findFirst({
    where: { id: deploymentId, ...orgScope(actor) },
    select: {
      id: true,
      version: true,
      status: true,
      imageLayers: true,
      engineProfile: true,
      endpoint: { select: { slug: true, deletedAt: true } },
    },
  });
  if (!deployment || deployment.endpoint.deletedAt)
    throw new AppError("NOT_FOUND", `No deployment ${deploymentId}.`, { field: "deploymentId" });
  const rows = await db.coldStart.findMany({
    where: { deploymentId, ...orgScope(actor) },
    orderBy: { requestedAt: "desc" },
    take: limit,
    select: {
      id: true,
      requestedAt: true,
      path: true,
      status: true,
      predictedSeconds: true,
      predictedMeanSeconds: true,
      actualSeconds: true,
      // The node figures the bottleneck hints compare phases against.
      node: { select: HOST_CEILINGS_SELECT },
      phases: {
        orderBy: { sequence: "asc" },
        select: { phase: true, seconds: true, bytes: true, throughputBps: true, attributes: true },
      },
    },
  });
  const samples: ColdStartSample[] = rows.map(({ node, phases, predictedMeanSeconds, ...row }) => ({
    ...row,
    // Predicted against actual is the mean's error: a p90 endpoint's objective figure is
    // meant to be above most starts. Starts placed before the mean was kept have only that.
    predictedSeconds: predictedMeanSeconds ?? row.predictedSeconds,
    host: node && hostCeilings(node),
    phases: phases.map((p) => ({
      ...p,
      bytes: p.bytes === null ? null : Number(p.bytes),
      attributes: asAttributes(p.attributes),
    })),
  }));
  return {
    deployment: {
      id: deployment.id,
      version: deployment.version,
      status: deployment.status,
      endpointSlug: deployment.endpoint.slug,
    },
    ...coldStartBreakdown(samples, deployment),
  };
}

/** PhaseEvent.attributes is a JSON object of scalars (the agent protocol); anything else reads as empty. */
export function asAttributes(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
