import type { Db } from "@thaw/db";
import { z } from "zod";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { asAttributes } from "../analytics/get-deployment-breakdown.ts";
import {
  BottleneckHint,
  bottleneckHints,
  HOST_CEILINGS_SELECT,
  hostCeilings,
} from "../analytics/bottleneck-hints.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { ColdStartStatus, ColdStartTrigger, Phase, StartPath } from "../vocabulary/index.ts";

export const GetColdStartInput = z.object({ id: z.uuid() }).strict();

/**
 * The options the scheduler considered for a start, as placement stored them
 * (placement/options-record.ts; an option may carry more, e.g. its node's id).
 */
const ConsideredOptions = z.object({
  feasible: z
    .array(
      z.looseObject({
        nodeName: z.string(),
        path: z.string(),
        locality: z.string(),
        chosen: z.boolean(),
        predictedSeconds: z.number(),
        p90Seconds: z.number(),
        samples: z.number(),
        lostBecause: z.string().nullable(),
        /**
         * `peer`: the node of the serving replica the copy comes from; a level-2 `restore`:
         * of the one that sends its weights.
         */
        peerSourceNodeName: z.string().optional(),
        /** `pull` / `lazy`: the stored kernel cache fetched before compile. */
        kernelCacheId: z.string().optional(),
      }),
    )
    .optional(),
  feasibleCount: z.number().optional(),
  infeasible: z
    .array(z.object({ path: z.string(), reason: z.string(), nodes: z.number() }))
    .optional(),
});

/** One cold start as its page shows it (getColdStart). */
export const ColdStartView = z.object({
  id: z.string(),
  endpoint: z.object({ slug: z.string(), name: z.string() }),
  deploymentId: z.string(),
  deploymentVersion: z.number(),
  node: z
    .object({
      name: z.string(),
      instanceType: z.string(),
      vcpus: z.number(),
      networkGbps: z.number(),
      /** The disk as the predictor and the hints see it (effectiveDiskFigures; the hints name its source). */
      diskReadMiBps: z.number(),
      diskWriteMiBps: z.number(),
      pcieGBps: z.number(),
    })
    .nullable(),
  attempt: z.number(),
  trigger: ColdStartTrigger,
  path: StartPath,
  locality: z.string(),
  status: ColdStartStatus,
  explored: z.boolean(),
  explanation: z.string(),
  predictedSeconds: z.number(),
  predictedMeanSeconds: z.number().nullable(),
  predictedP10Seconds: z.number().nullable(),
  predictedP90Seconds: z.number().nullable(),
  actualSeconds: z.number().nullable(),
  error: z.string().nullable(),
  failedPhase: Phase.nullable(),
  requestedAt: z.date(),
  options: ConsideredOptions,
  phases: z.array(
    z.object({
      sequence: z.number(),
      phase: Phase,
      startedAt: z.date(),
      seconds: z.number().nullable(),
      bytes: z.number().nullable(),
      throughputBps: z.number().nullable(),
      attributes: z.record(z.string(), z.unknown()),
    }),
  ),
  bottlenecks: z.array(BottleneckHint),
});
export type ColdStartView = z.infer<typeof ColdStartView>;

/**
 * One cold start with its phases (in order, with bytes and throughput), the options the
 * scheduler considered with their predictions and why each lost, and the node's figures —
 * what the waterfall and the "why this path" panel show — and what bounded each phase on
 * that node (analytics/bottleneck-hints.ts).
 */
export async function getColdStart({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: unknown;
  db: Db;
}): Promise<ColdStartView> {
  assertCan(actor, "endpoints:read");
  const { id } = parseInput(GetColdStartInput, input);
  const row = await db.coldStart.findFirst({
    where: { id, ...orgScope(actor) },
    include: {
      phases: { orderBy: { sequence: "asc" } },
      endpoint: { select: { slug: true, name: true } },
      deployment: { select: { version: true, imageLayers: true, engineProfile: true } },
      node: {
        select: { name: true, instanceType: true, ...HOST_CEILINGS_SELECT },
      },
    },
  });
  if (!row) throw new AppError("NOT_FOUND", `No cold start ${id}.`, { field: "id" });
  const host = row.node && hostCeilings(row.node);
  // The REST document's node (ColdStartDetail): the figures, not where the disk's came from.
  const node = row.node &&
    host && {
      name: row.node.name,
      instanceType: row.node.instanceType,
      vcpus: host.vcpus,
      networkGbps: host.networkGbps,
      diskReadMiBps: host.diskReadMiBps,
      diskWriteMiBps: host.diskWriteMiBps,
      pcieGBps: host.pcieGBps,
    };
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
    node,
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
    options: consideredOptions(row.options),
    phases,
    bottlenecks: bottleneckHints({
      path: row.path,
      phases,
      host,
      imageLayers: row.deployment.imageLayers,
      engineProfile: row.deployment.engineProfile,
    }),
  };
}

/**
 * ColdStart.options as the page reads it: placement's record, or nothing considered for a row
 * holding anything else (the column's default, `[]`, on a start no placement recorded).
 */
function consideredOptions(stored: unknown): z.infer<typeof ConsideredOptions> {
  const record = ConsideredOptions.safeParse(stored);
  return record.success ? record.data : {};
}
