import { AppError } from "@thaw/core";
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from "rate-limiter-flexible";
import { env } from "../../env.ts";
import { readyWebRedis } from "../queue-producer.ts";

// REST v1 rate limits per API key (rate-limiter-flexible): a fixed window of a minute counted
// in Redis, so every web process shares one budget per key. While Redis is unreachable an
// in-process limiter with the same budget stands in, so the API neither stops nor runs
// unlimited.

const WINDOW_SECONDS = 60;
let limiter: RateLimiterAbstract | undefined;

async function restLimiter(): Promise<RateLimiterAbstract> {
  if (limiter) return limiter;
  const { THAW_REST_RATE_LIMIT_PER_MINUTE: points, THAW_QUEUE_PREFIX } = env();
  const memory = new RateLimiterMemory({ points, duration: WINDOW_SECONDS });
  const redis = await readyWebRedis();
  limiter = redis
    ? new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${THAW_QUEUE_PREFIX}:rate:rest`,
        points,
        duration: WINDOW_SECONDS,
        insuranceLimiter: memory,
      })
    : memory;
  return limiter;
}

export interface RestQuota {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/** Takes one request from the key's budget; a spent budget is a 429 with when to retry. */
export async function consumeRestQuota(apiKeyId: string): Promise<RestQuota> {
  const l = await restLimiter();
  try {
    const res = await l.consume(apiKeyId);
    return {
      limit: l.points,
      remaining: res.remainingPoints,
      resetSeconds: Math.ceil(res.msBeforeNext / 1000),
    };
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    const retryAfterSeconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
    throw new AppError(
      "RATE_LIMITED",
      `This API key made more than ${l.points} requests in a minute; retry in ${retryAfterSeconds} s.`,
      { retryAfterSeconds, limitPerMinute: l.points },
    );
  }
}

/** The RateLimit headers of a successful answer (IETF draft names, as GitHub and others use). */
export function rateLimitHeaders(quota: RestQuota): Record<string, string> {
  return {
    "ratelimit-limit": String(quota.limit),
    "ratelimit-remaining": String(quota.remaining),
    "ratelimit-reset": String(quota.resetSeconds),
  };
}
