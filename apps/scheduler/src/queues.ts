import { DEFAULT_JOB_OPTIONS, jobOf, QUEUES, type QueueKey, type QueuePayload } from "@thaw/core";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";

export type SchedulerQueues = { [K in QueueKey]: Queue };

export function createQueues(connection: Redis, prefix: string): SchedulerQueues {
  const entries = (Object.keys(QUEUES) as QueueKey[]).map((key) => [
    key,
    new Queue(QUEUES[key].name, { connection, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS }),
  ]);
  return Object.fromEntries(entries) as SchedulerQueues;
}

/** Enqueue with the contract's payload validation, deduplicated on the entity (jobOf). */
export async function enqueue<K extends QueueKey>(
  queues: SchedulerQueues,
  key: K,
  payload: QueuePayload<K>,
): Promise<void> {
  const job = jobOf(key, payload);
  await queues[key].add(job.name, job.data, job.opts);
}

/**
 * Several jobs of one queue in one round trip (BullMQ's addBulk: one MULTI), each exactly as
 * `enqueue` would add it. A place job's batch or a reconcile of a scale-up makes dozens to
 * hundreds at once; one by one, each was a round trip and a socket write.
 */
export async function enqueueMany<K extends QueueKey>(
  queues: SchedulerQueues,
  key: K,
  payloads: readonly QueuePayload<K>[],
): Promise<void> {
  if (payloads.length === 0) return;
  await queues[key].addBulk(payloads.map((payload) => jobOf(key, payload)));
}
