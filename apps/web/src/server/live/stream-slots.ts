import type { Redis } from "ioredis";

// Open live streams are counted across every web process in Redis: a sorted set per holder
// (a user, an API key, an org) whose members are open streams, scored by when each lapses.
// A stream renews its slot while it runs; a crashed process's slots lapse on their own.

/** Takes a slot in every set, or none: `KEYS` the sets, ARGV = now, lapse, member, caps…. */
const TAKE = `
local now = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) >= tonumber(ARGV[3 + i]) then return i end
end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', key, tonumber(ARGV[2]) - now)
end
return 0`;

export interface SlotHolder {
  key: string;
  cap: number;
  /** Says who is full, e.g. "this API key". */
  who: string;
}

/**
 * Takes one slot for `streamId` in every holder's set, or none. Returns the holder that is
 * full, or null when the slot was taken.
 */
export async function takeStreamSlot(
  redis: Redis,
  holders: readonly SlotHolder[],
  streamId: string,
  lapseMs: number,
): Promise<SlotHolder | null> {
  const now = Date.now();
  const full = (await redis.eval(
    TAKE,
    holders.length,
    ...holders.map((h) => h.key),
    now,
    now + lapseMs,
    streamId,
    ...holders.map((h) => h.cap),
  )) as number;
  return full === 0 ? null : holders[full - 1]!;
}

/** Keeps the stream's slots from lapsing for another `lapseMs`. */
export async function renewStreamSlot(
  redis: Redis,
  holders: readonly SlotHolder[],
  streamId: string,
  lapseMs: number,
): Promise<void> {
  const until = Date.now() + lapseMs;
  const multi = redis.multi();
  for (const h of holders) multi.zadd(h.key, "XX", until, streamId).pexpire(h.key, lapseMs);
  await multi.exec();
}

export async function releaseStreamSlot(
  redis: Redis,
  holders: readonly SlotHolder[],
  streamId: string,
): Promise<void> {
  const multi = redis.multi();
  for (const h of holders) multi.zrem(h.key, streamId);
  await multi.exec();
}
