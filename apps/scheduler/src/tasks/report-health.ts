import { recordServiceHeartbeat } from "@thaw/core";
import type { DbClient } from "@thaw/db";
import type { Redis } from "ioredis";
import type { SchedulerQueues } from "../queues.ts";

/**
 * Writes this scheduler's heartbeat (with Redis round-trip and queue depths) to Postgres,
 * where the dashboard reads it. A failure to reach Redis is reported, not thrown: the row
 * then says Redis is down, which is exactly what an operator needs to see.
 */
export async function reportHealth(args: {
  db: DbClient;
  redis: Redis;
  queues: SchedulerQueues;
  instanceId: string;
  startedAt: Date;
  version: string;
}) {
  const { db, redis, queues, instanceId, startedAt, version } = args;
  let redisOk = true;
  let redisLatencyMs: number | null = null;
  const depths: Record<string, number> = {};
  try {
    const t0 = performance.now();
    await redis.ping();
    redisLatencyMs = Math.round((performance.now() - t0) * 100) / 100;
    for (const [key, queue] of Object.entries(queues)) {
      const counts = await queue.getJobCounts("waiting", "active", "delayed");
      depths[key] = (counts.waiting ?? 0) + (counts.active ?? 0) + (counts.delayed ?? 0);
    }
  } catch {
    redisOk = false;
  }
  await recordServiceHeartbeat({
    db,
    input: {
      instanceId,
      service: "scheduler",
      startedAt,
      details: { version, pid: process.pid, redisOk, redisLatencyMs, queueDepths: depths },
    },
  });
}
