import type { Db } from "@thaw/db";
import { z } from "zod";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";

export const GetColdStartInput = z.object({ id: z.uuid() }).strict();

/**
 * One cold start with its phases (in order, with bytes and throughput), the options the
 * scheduler considered with their predictions and why each lost, and the node's figures —
 * what the waterfall and the "why this path" panel show.
 */
export async function getColdStart({ actor, input, db }: { actor: Actor; input: unknown; db: Db }) {
  assertCan(actor, "endpoints:read");
  const { id } = parseInput(GetColdStartInput, input);
  const row = await db.coldStart.findFirst({
    where: { id, ...orgScope(actor) },
    include: {
      phases: { orderBy: { sequence: "asc" } },
      endpoint: { select: { slug: true, name: true } },
      node: {
        select: {
          name: true,
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
  return {
    id: row.id,
    endpoint: row.endpoint,
    node: row.node,
    attempt: row.attempt,
    trigger: row.trigger,
    path: row.path,
    locality: row.locality,
    status: row.status,
    explored: row.explored,
    explanation: row.explanation,
    predictedSeconds: row.predictedSeconds,
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
    phases: row.phases.map((p) => ({
      sequence: p.sequence,
      phase: p.phase,
      startedAt: p.startedAt,
      seconds: p.seconds,
      bytes: p.bytes === null ? null : Number(p.bytes),
      throughputBps: p.throughputBps,
    })),
  };
}
