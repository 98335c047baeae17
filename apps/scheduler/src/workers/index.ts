import {
  QUEUES,
  type ClosedColdStartHandled,
  type PlaceReplicaResult,
  type QueueKey,
} from "@thaw/core";
import { type Job, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "../logger.ts";
import type { SchedulerMetrics } from "../metrics/scheduler-metrics.ts";
import type { ColdStartTraces } from "../tracing/cold-start-traces.ts";
import { processDispatch } from "./dispatch-processor.ts";
import { processFleet } from "./fleet-processor.ts";
import { processHistory } from "./history-processor.ts";
import { processPlace } from "./place-processor.ts";
import { processReconcile } from "./reconcile-processor.ts";
import { processWarmPool } from "./warm-pool-processor.ts";
import { processSnapshot } from "./snapshot-processor.ts";
import { processSweep, type SweepSliceResult } from "./sweep-processor.ts";
import { processWebhookDelivery } from "./webhook-delivery-processor.ts";
import { processWhatIf } from "./what-if-processor.ts";
import type { WorkerContext } from "./worker-context.ts";

// The registry of queue processors this process runs, one file each. Concurrency is per
// process; run more scheduler processes to scale out (every processor is safe to race).

type Processor = (ctx: WorkerContext, data: unknown, job: Job) => Promise<unknown>;

export const PROCESSORS: Partial<Record<QueueKey, { run: Processor; concurrency: number }>> = {
  reconcile: { run: processReconcile, concurrency: 4 },
  // A place job's time is mostly its transaction's round trips to Postgres: 16 at once keep
  // a core busy (8 left it half idle: bench:placement 644 → 736–786 placements/s).
  place: { run: processPlace, concurrency: 16 },
  dispatch: { run: (ctx, data, job) => processDispatch(ctx, data, job), concurrency: 32 },
  history: { run: processHistory, concurrency: 8 },
  fleet: { run: processFleet, concurrency: 2 },
  warmPool: { run: processWarmPool, concurrency: 4 },
  // The sweep's slices (each its endpoints' reconciles and tendings, one after the other), two
  // at a time per process beside the live jobs' own slots: a scale event never waits for a
  // slot behind them (QUEUES.sweep).
  sweep: { run: processSweep, concurrency: 2 },
  // A capture holds its job while the agent checkpoints (minutes on a real host): few at once.
  snapshot: { run: (ctx, data, job) => processSnapshot(ctx, data, job), concurrency: 2 },
  // A delivery waits on a receiver for up to 10 s: many at once, few of them busy.
  webhookDelivery: {
    run: (ctx, data, job) => processWebhookDelivery(ctx, data, job),
    concurrency: 16,
  },
  // CPU-bound replays (what-if-processor.ts): one at a time per process.
  whatIf: { run: processWhatIf, concurrency: 1 },
};

/**
 * A dead scheduler's jobs come back when BullMQ finds them stalled: the lock lapses
 * (lockDuration, renewed every half of it while the process lives), then the next stalled
 * check moves the job back to wait. BullMQ's 30 s + 30 s made a crashed scheduler's scale-up
 * wait a minute; 15 s + 15 s halves that. Every processor is idempotent, so a job taken back
 * early from a process that merely stalled is safe to run again.
 */
const JOB_LOCK = { lockDuration: 15_000, stalledInterval: 15_000 } as const;

export function startWorkers(opts: {
  ctx: WorkerContext;
  connection: Redis;
  prefix: string;
  log: Logger;
  only?: QueueKey[];
  /** Counts each job, and the decisions and closed starts in place's and history's results. */
  metrics?: SchedulerMetrics;
  /** Exports each cold start the history worker closed as a trace. */
  traces?: ColdStartTraces;
}): Worker[] {
  const workers: Worker[] = [];
  for (const [key, processor] of Object.entries(PROCESSORS) as [
    QueueKey,
    { run: Processor; concurrency: number },
  ][]) {
    if (opts.only && !opts.only.includes(key)) continue;
    const worker = new Worker(
      QUEUES[key].name,
      (job: Job) => processor.run(opts.ctx, job.data, job),
      {
        connection: opts.connection,
        prefix: opts.prefix,
        concurrency: processor.concurrency,
        ...JOB_LOCK,
      },
    );
    worker.on("failed", (job, error) => {
      if (job) opts.metrics?.observeJob(key, job, "failed");
      opts.log.warn(
        { queue: key, jobId: job?.id, attempts: job?.attemptsMade, err: error.message },
        "job failed",
      );
    });
    const { metrics, traces } = opts;
    if (metrics || traces)
      worker.on("completed", (job, result: unknown) => {
        metrics?.observeJob(key, job, "completed");
        // The processors' own results (place-processor.ts, history-processor.ts).
        if (key === "place") metrics?.observePlacement(result as PlaceReplicaResult);
        // A scale-up's first batch, placed from its reconcile job (reconcile-processor.ts).
        const fromReconcile = (result as { placement?: PlaceReplicaResult } | null)?.placement;
        if (key === "reconcile" && fromReconcile) metrics?.observePlacement(fromReconcile);
        // And those of the sweep's reconciles (sweep-processor.ts).
        if (key === "sweep")
          for (const placement of (result as SweepSliceResult).placements)
            metrics?.observePlacement(placement);
        if (key === "history") {
          const closed = (result as ClosedColdStartHandled).closed;
          if (!closed) return; // already handled by an earlier run: counted and traced then
          metrics?.observeClosedColdStart(closed);
          void traces?.export(QUEUES.history.payload.parse(job.data).coldStartId);
        }
      });
    worker.on("error", (error) =>
      opts.log.error({ queue: key, err: error.message }, "worker error"),
    );
    workers.push(worker);
  }
  return workers;
}
