import { setTimeout as sleep } from "node:timers/promises";
import { AppError, WhatIfReport, whatIfJobOf, type RunWhatIf } from "@thaw/core";
import { Job } from "bullmq";
import { env } from "../env.ts";
import { queueFor, readyWebRedis } from "./queue-producer.ts";

// The web app's side of a what-if (core's getEndpointWhatIf hands it the job): the replays run
// in the scheduler (the whatIf queue), never on this process's event loop, and the request
// waits on the job. The job id is the run's key, so a view that asks while the same run is
// queued, running or kept (5 minutes) joins it instead of starting another. A new run takes a
// slot of the org's THAW_WHAT_IF_PER_ORG in Redis first (a sorted set across web processes,
// whose slots lapse on their own if a process dies), so one org cannot fill the schedulers'
// what-if queue: past it, a 429.

const POLL_MS = 100;

/**
 * Takes the org's slot for run ARGV[3] (KEYS[1]: the org's sorted set, scored by when each
 * slot lapses; ARGV: now, lapse, run, cap). A run that holds one already is joined (1), not
 * counted twice; a full set refuses (0); else the slot is taken (2).
 */
const TAKE = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) - now)
return 2`;

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
  const id = job.opts.jobId;
  const timeoutMs = e.THAW_WHAT_IF_TIMEOUT_SECONDS * 1000;
  const slots = `${e.THAW_QUEUE_PREFIX}:what-if:org:${payload.orgId}`;
  let slot = false;
  try {
    if (!(await Job.fromId(queue, id))) {
      const now = Date.now();
      const taken = (await redis.eval(
        TAKE,
        1,
        slots,
        now,
        now + timeoutMs + 5_000,
        id,
        e.THAW_WHAT_IF_PER_ORG,
      )) as number;
      if (taken === 0)
        throw new AppError(
          "RATE_LIMITED",
          `${e.THAW_WHAT_IF_PER_ORG} what-if(s) of this org are replaying; retry in a few seconds.`,
          { retryAfterSeconds: 5, concurrentWhatIfsLimit: e.THAW_WHAT_IF_PER_ORG },
        );
      slot = taken === 2;
      // A job with this id added meanwhile (another view, a moment ago) is left as it is.
      await queue.add(job.name, job.data, job.opts);
    }
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const current = await Job.fromId(queue, id);
      if (current?.finishedOn) {
        if (current.failedReason)
          throw new AppError("INTERNAL", `The what-if's replay failed: ${current.failedReason}`);
        return WhatIfReport.parse(current.returnvalue);
      }
      await sleep(POLL_MS);
    }
    throw new AppError(
      "UNAVAILABLE",
      `No scheduler answered the what-if within ${e.THAW_WHAT_IF_TIMEOUT_SECONDS} s (is one running?); it stays queued, so a later retry may find it done.`,
      { retryAfterSeconds: 10 },
    );
  } finally {
    if (slot) await redis.zrem(slots, id).catch(() => undefined);
  }
};
