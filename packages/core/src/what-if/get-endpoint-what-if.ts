import { createHash } from "node:crypto";
import type { Db } from "@thaw/db";
import { assertCan, type Actor } from "../auth/index.ts";
import { findEndpoint } from "../endpoints/find-endpoint.ts";
import { AppError } from "../errors/index.ts";
import type { QueuePayload } from "../queues/contracts.ts";
import { effectiveWaitPrice } from "../scheduling/index.ts";
import type { WhatIfReport } from "./what-if-schemas.ts";
import { noLoadReport, whatIfWindow } from "./what-if-window.ts";

/**
 * Runs a what-if job and answers its report (the web app's: the whatIf queue, waited on).
 * The key names the run: the same endpoint, window, load and settings make the same key, so
 * views that ask again while it runs or soon after share one run.
 */
export type RunWhatIf = (payload: QueuePayload<"whatIf">) => Promise<WhatIfReport>;

/**
 * What-if for one endpoint (REST GET /api/v1/endpoints/{endpoint}/what-if, its page): the
 * window is checked here (a 422 naming the field), an endpoint without recorded load is
 * answered at once with what to do, and the replays themselves are `run`'s — in the scheduler,
 * off the web server's event loop (buildEndpointWhatIf says what they are).
 */
export async function getEndpointWhatIf({
  actor,
  endpoint,
  input,
  db,
  run,
  now = new Date(),
  where = "query",
}: {
  actor: Actor;
  endpoint: unknown;
  input?: unknown;
  db: Db;
  run: RunWhatIf;
  now?: Date;
  where?: string;
}): Promise<WhatIfReport> {
  assertCan(actor, "endpoints:read");
  const row = await findEndpoint(db, actor, endpoint);
  const window = whatIfWindow(input, where, now);
  const org = await db.org.findUniqueOrThrow({
    where: { id: actor.orgId },
    select: { gpuSecondsPerWaitSecond: true },
  });
  const load = await db.loadSample.aggregate({
    where: { orgId: actor.orgId, endpointId: row.id, minute: { gte: window.from, lt: window.to } },
    _count: { _all: true },
    _sum: { signals: true },
    _max: { minute: true },
  });
  if (load._count._all === 0)
    return noLoadReport({
      endpoint: row,
      window,
      current: effectiveWaitPrice(row.gpuSecondsPerWaitSecond, org.gpuSecondsPerWaitSecond),
    });
  if (!row.activeDeploymentId)
    throw new AppError(
      "UNPROCESSABLE",
      "The endpoint has no active deployment: there is nothing to start in a replay.",
      { field: "endpoint" },
    );
  // Everything the replay reads that a person may change between two views.
  const key = createHash("sha256")
    .update(
      JSON.stringify([
        window.from.getTime(),
        window.to.getTime(),
        load._count._all,
        load._sum.signals,
        load._max.minute?.getTime(),
        row.gpuSecondsPerWaitSecond,
        org.gpuSecondsPerWaitSecond,
        row.activeDeploymentId,
        row.gpuType,
        row.gpuCount,
        row.minReplicas,
        row.maxReplicas,
        row.targetConcurrency,
        row.allowedPaths,
      ]),
    )
    .digest("hex")
    .slice(0, 32);
  return run({
    orgId: actor.orgId,
    endpointId: row.id,
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    key,
  });
}
