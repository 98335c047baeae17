import { Redis } from "ioredis";

/**
 * Two kinds of connections, as the BullMQ production guide says: workers block and must
 * retry forever (maxRetriesPerRequest: null); producers fail fast so an API call never
 * hangs on a Redis outage.
 */
export function createWorkerConnection(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true });
}

export function createProducerConnection(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
}

/** BullMQ loses jobs under any eviction policy: refuse to start on such a Redis. */
export async function assertNoEviction(redis: Redis): Promise<void> {
  // INFO, not CONFIG GET: managed Redis (ElastiCache, MemoryDB) refuses CONFIG.
  const info = await redis.info("memory");
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? "unknown";
  if (policy !== "noeviction") {
    throw new Error(
      `Redis maxmemory-policy is '${policy}'; BullMQ needs 'noeviction' (CONFIG SET maxmemory-policy noeviction, or set it in redis.conf).`,
    );
  }
}
