import { DEFAULT_JOB_OPTIONS, jobOf, QUEUES, type QueueKey, type QueuePayload } from "@thaw/core";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { env } from "../env.ts";
import { log } from "./logger.ts";

// Producers for the scheduler's queues (ARCHITECTURE.md §3): the web app only enqueues. The
// connection fails fast (an API call must not hang on Redis), and an enqueue that fails is
// logged, not thrown: what was asked is already committed in Postgres, and the scheduler's
// sweep picks it up from there within RECONCILE_SWEEP_MS.

const holder = globalThis as typeof globalThis & {
  __thawQueues?: { redis: Redis; queues: Map<QueueKey, Queue> };
};

/** The web app's one Redis connection (queues, rate limits); undefined without REDIS_URL. */
export function webRedis(): Redis | undefined {
  const { REDIS_URL } = env();
  if (!REDIS_URL) return undefined;
  holder.__thawQueues ??= {
    redis: new Redis(REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false }),
    queues: new Map(),
  };
  return holder.__thawQueues.redis;
}

/** The first callers' shared wait for the connection (readyWebRedis). */
let readyWait: Promise<void> | undefined;

/**
 * The connection once it is usable: commands sent before the first connect would fail
 * (no offline queue), so the first callers wait for it — at most `timeoutMs`. They share one
 * wait (a listener each tripped Node's MaxListeners warning when a burst of agents arrived
 * at a fresh process).
 */
export async function readyWebRedis(timeoutMs = 1_000): Promise<Redis | undefined> {
  const redis = webRedis();
  if (!redis || redis.status === "ready") return redis;
  readyWait ??= new Promise<void>((resolve) => {
    const timer = setTimeout(done, timeoutMs);
    function done() {
      clearTimeout(timer);
      redis!.off("ready", done);
      readyWait = undefined;
      resolve();
    }
    redis.once("ready", done);
  });
  await readyWait;
  return redis;
}

/** The producer of one queue on the web app's connection; undefined without REDIS_URL. */
export function queueFor(key: QueueKey): Queue | undefined {
  const { THAW_QUEUE_PREFIX } = env();
  if (!webRedis()) return undefined;
  const { redis, queues } = holder.__thawQueues!;
  let queue = queues.get(key);
  if (!queue) {
    queue = new Queue(QUEUES[key].name, {
      connection: redis,
      prefix: THAW_QUEUE_PREFIX,
      defaultJobOptions: DEFAULT_JOB_OPTIONS,
    });
    queues.set(key, queue);
  }
  return queue;
}

/** Enqueues a job deduplicated on its entity (jobOf in @thaw/core's queue contracts says why). */
export async function enqueue<K extends QueueKey>(
  queue: K,
  payload: QueuePayload<K>,
): Promise<void> {
  const job = jobOf(queue, payload);
  const target = queueFor(queue);
  if (!target) return;
  try {
    await target.add(job.name, job.data, job.opts);
  } catch (error) {
    log().warn(
      { queue, err: error instanceof Error ? error.message : String(error) },
      "enqueue failed; the scheduler's sweep will pick the work up from Postgres",
    );
  }
}

/** Closes the producer connection (tests, shutdown). */
export async function closeQueues(): Promise<void> {
  const held = holder.__thawQueues;
  holder.__thawQueues = undefined;
  if (!held) return;
  await Promise.all([...held.queues.values()].map((q) => q.close()));
  held.redis.disconnect();
}
