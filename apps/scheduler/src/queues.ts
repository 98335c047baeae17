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

/**
 * Enqueue with the contract's payload validation, deduplicated on the entity (the
 * contract's job key). Not a custom job id: BullMQ keeps finished jobs for a while and would
 * silently drop a new job with a finished one's id. `keepLastIfActive` means a change that
 * lands while the entity's job runs gets one more run afterwards — never lost, never parallel.
 */
export async function enqueue<K extends QueueKey>(
  queues: SchedulerQueues,
  key: K,
  payload: QueuePayload<K>,
): Promise<void> {
  const contract = QUEUES[key];
  const data = contract.payload.parse(payload) as QueuePayload<K>;
  await queues[key].add(contract.name, data, {
    deduplication: {
      id: (contract.jobId as (p: QueuePayload<K>) => string)(data),
      keepLastIfActive: true,
    },
  });
}
