import { afterAll, beforeAll } from "vitest";
import { createQueues, type SchedulerQueues } from "../queues.ts";
import { createProducerConnection } from "../redis.ts";

/**
 * The scheduler's queues under a test file's own BullMQ prefix, on one producer connection to
 * the test Redis: opened before the file's tests, emptied and closed after them. Read the
 * fields inside tests and hooks (they exist from the file's first beforeAll on).
 */
export function useTestQueues(prefix: string): {
  readonly queues: SchedulerQueues;
  readonly producer: ReturnType<typeof createProducerConnection>;
} {
  let producer: ReturnType<typeof createProducerConnection> | undefined;
  let queues: SchedulerQueues | undefined;
  beforeAll(async () => {
    producer = createProducerConnection(process.env.REDIS_URL!);
    await producer.connect();
    queues = createQueues(producer, prefix);
  });
  afterAll(async () => {
    if (queues)
      await Promise.all(
        Object.values(queues).map((q) => q.obliterate({ force: true }).then(() => q.close())),
      );
    producer?.disconnect();
  });
  return {
    get queues() {
      if (!queues) throw new Error("useTestQueues: the queues open in beforeAll");
      return queues;
    },
    get producer() {
      if (!producer) throw new Error("useTestQueues: the producer opens in beforeAll");
      return producer;
    },
  };
}
