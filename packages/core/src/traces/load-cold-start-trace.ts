import type { DbClient } from "@thaw/db";
import type { ColdStartTraceInput } from "./cold-start-trace.ts";

// What a closed cold start's trace is made of, read for the scheduler's exporter (an operator
// process: by id, across orgs, like the history worker that closes the start).

export interface LoadedColdStartTrace {
  input: ColdStartTraceInput;
  /** The trace context of the API call that caused it, when one was recorded. */
  traceparent: string | null;
}

export async function loadColdStartTrace({
  db,
  coldStartId,
}: {
  db: DbClient;
  coldStartId: string;
}): Promise<LoadedColdStartTrace | null> {
  const start = await db.coldStart.findUnique({
    where: { id: coldStartId },
    include: {
      phases: { orderBy: { sequence: "asc" } },
      node: { select: { name: true, instanceType: true, gpuModel: true } },
      replica: { select: { createdAt: true, scaleEventId: true } },
    },
  });
  if (!start || (start.status !== "succeeded" && start.status !== "failed")) return null;
  const scaleEvent = start.replica.scaleEventId
    ? await db.scaleEvent.findUnique({
        where: { id: start.replica.scaleEventId },
        select: { createdAt: true, traceparent: true },
      })
    : null;
  const { phases, node, replica, ...coldStart } = start;
  return {
    traceparent: scaleEvent?.traceparent ?? null,
    input: {
      coldStart,
      node,
      replicaCreatedAt: replica.createdAt,
      scaleRequestedAt: scaleEvent?.createdAt ?? null,
      phases: phases.map((p) => ({
        phase: p.phase,
        sequence: p.sequence,
        startedAt: p.startedAt,
        endedAt: p.endedAt,
        seconds: p.seconds,
        bytes: p.bytes,
        throughputBps: p.throughputBps,
        // The sim runtime marks its phases (they ran on a compressed clock).
        simulated: (p.attributes as { simulated?: unknown } | null)?.simulated === true,
      })),
    },
  };
}
