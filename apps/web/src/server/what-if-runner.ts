import { setTimeout as sleep } from "node:timers/promises";
import { AppError, WhatIfReport, whatIfJobOf, type RunWhatIf } from "@thaw/core";
import { Job } from "bullmq";
import { env } from "../env.ts";
import { releaseStreamSlot, takeStreamSlot, type SlotHolder } from "./live/stream-slots.ts";
import { queueFor, readyWebRedis } from "./queue-producer.ts";

// The web app's side of a what-if (core's getEndpointWhatIf hands it the job): the replays run
// in the scheduler (the whatIf queue), never on this process's event loop, and the request
// waits on the job. The job id is the run's key, so a view that asks while the same run is
// queued, running or kept (5 minutes) joins it instead of starting another. A new run takes a
// slot of the org's THAW_WHAT_IF_PER_ORG in Redis first (a sorted set across web processes,
// whose slots lapse on their own if a process dies), so one org cannot fill the schedulers'
// what-if queue: past it, a 429.

const POLL_MS = 100;

export const runWhatIfInScheduler: RunWhatIf = async (payload) => {
  const e = env();
  const redis = await readyWebRedis();
  const queue = queueFor("whatIf");
  if (!redis || !queue)
    throw new AppError(
      "UNAVAILABLE",
      "The what-if needs Redis (REDIS_URL) to reach the scheduler.",
      {
        retryAfterSeconds: 30,
      },
    );
  const job = whatIfJobOf(payload);
  const timeoutMs = e.THAW_WHAT_IF_TIMEOUT_SECONDS * 1000;
  const holders: SlotHolder[] = [
    {
      key: `${e.THAW_QUEUE_PREFIX}:what-if:org:${payload.orgId}`,
      cap: e.THAW_WHAT_IF_PER_ORG,
      who: "this org",
    },
  ];
  let slot = false;
  try {
    if (!(await Job.fromId(queue, job.opts.jobId))) {
      const full = await takeStreamSlot(redis, holders, job.opts.jobId, timeoutMs + 5_000);
      if (full)
        throw new AppError(
          "RATE_LIMITED",
          `${full.cap} what-if(s) of this org are replaying; retry in a few seconds.`,
          { retryAfterSeconds: 5, concurrentWhatIfsLimit: full.cap },
        );
      slot = true;
      // A job with this id already added (another view, a moment ago) is left as it is.
      await queue.add(job.name, job.data, job.opts);
    }
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const current = await Job.fromId(queue, job.opts.jobId);
      if (current?.finishedOn) {
        if (current.failedReason)
          throw new AppError("INTERNAL", `The what-if's replay failed: ${current.failedReason}`);
        return WhatIfReport.parse(current.returnvalue);
      }
      await sleep(POLL_MS);
    }
    throw new AppError(
      "UNAVAILABLE",
      `No scheduler answered the what-if within ${e.THAW_WHAT_IF_TIMEOUT_SECONDS} s (is one running?); it stays queued, so retrying later may find it done.`,
      { retryAfterSeconds: 10 },
    );
  } finally {
    if (slot) await releaseStreamSlot(redis, holders, job.opts.jobId).catch(() => undefined);
  }
};
