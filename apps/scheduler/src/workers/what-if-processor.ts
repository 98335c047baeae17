import { setImmediate as turn } from "node:timers/promises";
import { buildEndpointWhatIf, QUEUES, type WhatIfReport } from "@thaw/core";
import type { WorkerContext } from "./worker-context.ts";

/**
 * whatIf: one endpoint's what-if (core's buildEndpointWhatIf), answered as the job's return
 * value, which the web app waits on. It runs here rather than in the web server because a
 * week of replays is about a second of CPU, which would hold every dashboard and API request
 * of that web process. Here it is one policy's replay at a time (tens of milliseconds for a
 * week; bench:what-if) with a turn of the event loop between them, so placements and agent
 * calls wait at most one replay; and one what-if at a time per process (the registry's
 * concurrency), so a burst of them queues instead of sharing the core.
 */
export async function processWhatIf(ctx: WorkerContext, data: unknown): Promise<WhatIfReport> {
  const job = QUEUES.whatIf.payload.parse(data);
  const report = await buildEndpointWhatIf({
    // The web app checked the caller's access before enqueueing; this reads within the org.
    actor: { type: "system", orgId: job.orgId },
    endpoint: job.endpointId,
    input: { from: job.from, to: job.to },
    db: ctx.db,
    snapshotsEnabled: ctx.snapshotStore !== undefined,
    between: () => turn(),
  });
  ctx.log.info(
    {
      endpointId: job.endpointId,
      requests: report.load.replayedRequests,
      points: report.points.length,
      seconds: report.replaySeconds,
    },
    "what-if replayed",
  );
  return report;
}
