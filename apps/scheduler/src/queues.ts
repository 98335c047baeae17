import { QUEUES, DEFAULT_JOB_OPTIONS, type QueueKey, type QueuePayload } from "@thaw/core";
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

/** Enqueue with the contract's payload validation and deterministic job id. */
export async function enqueue<K extends QueueKey>(
  queues: SchedulerQueues,
  key: K,
  payload: QueuePayload<K>,
): Promise<void> {
  const contract = QUEUES[key];
  const data = contract.payload.parse(payload) as QueuePayload<K>;
  await queues[key].add(contract.name, data, {
    jobId: (contract.jobId as (p: QueuePayload<K>) => string)(data),
  });
}
