import type { Db } from "@thaw/db";
import { z } from "zod";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { asAttributes } from "../analytics/get-deployment-breakdown.ts";
import { bottleneckHints } from "../analytics/bottleneck-hints.ts";
import { AppError, parseInput } from "../errors/index.ts";

export const GetColdStartInput = z.object({ id: z.uuid() }).strict();

/**
 * One cold start with its phases (in order, with bytes and throughput), the options the
 * scheduler considered with their predictions and why each lost, and the node's figures —
 * what the waterfall and the "why this path" panel show — and what bounded each phase on
 * that node (analytics/bottleneck-hints.ts).
 */
export async function getColdStart({ actor, input, db }: { actor: Actor; input: unknown; db: Db }) {
  assertCan(actor, "endpoints:read");
  const { id } = parseInput(GetColdStartInput, input);
  const row = await db.coldStart.findFirst({
    where: { id, ...orgScope(actor) },
    include: {
      phases: { orderBy: { sequence: "asc" } },
      endpoint: { select: { slug: true, name: true } },
      deployment: { select: { version: true, imageLayers: true, engineProfile: true } },
      node: {
        select: {
          name: true,
          vcpus: true,
          instanceType: true,
          networkGbps: true,
          diskWriteMiBps: true,
          diskReadMiBps: true,
          pcieGBps: true,
        },
      },
    },
  });
  if (!row) throw new AppError("NOT_FOUND", `No cold start ${id}.`, { field: "id" });
  const phases = row.phases.map((p) => ({
    sequence: p.sequence,
    phase: p.phase,
    startedAt: p.startedAt,
    seconds: p.seconds,
    bytes: p.bytes === null ? null : Number(p.bytes),
    throughputBps: p.throughputBps,
    attributes: asAttributes(p.attributes),
  }));
  return {
    id: row.id,
    endpoint: row.endpoint,
    deploymentId: row.deploymentId,
    deploymentVersion: row.deployment.version,
    node: row.node,
    attempt: row.attempt,
    trigger: row.trigger,
    path: row.path,
    locality: row.locality,
    status: row.status,
    explored: row.explored,
    explanation: row.explanation,
    predictedSeconds: row.predictedSeconds,
    predictedMeanSeconds: row.predictedMeanSeconds,
    predictedP10Seconds: row.predictedP10Seconds,
    predictedP90Seconds: row.predictedP90Seconds,
    actualSeconds: row.actualSeconds,
    error: row.error,
    failedPhase: row.failedPhase,
    requestedAt: row.requestedAt,
    options: row.options as {
      feasible?: {
        nodeName: string;
        path: string;
        locality: string;
        chosen: boolean;
        predictedSeconds: number;
        p90Seconds: number;
        samples: number;
        lostBecause: string | null;
      }[];
      feasibleCount?: number;
      infeasible?: { path: string; reason: string; nodes: number }[];
    },
    phases,
    bottlenecks: bottleneckHints({
      path: row.path,
      phases,
      host: row.node,
      imageLayers: row.deployment.imageLayers,
      engineProfile: row.deployment.engineProfile,
    }),
  };
}
