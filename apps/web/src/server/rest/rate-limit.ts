import { AppError, isAppError } from "@thaw/core";
import { consumeLimit, type Quota } from "../limits/rate-limits.ts";

// REST v1's per-key budget (THAW_REST_RATE_LIMIT_PER_MINUTE), one of the web tier's shared
// limits (limits/rate-limits.ts), with the answer REST clients already know.

export type RestQuota = Quota;

/** Takes one request from the key's budget; a spent budget is a 429 with when to retry. */
export async function consumeRestQuota(apiKeyId: string): Promise<RestQuota> {
  try {
    return await consumeLimit("restPerKey", apiKeyId);
  } catch (error) {
    if (!isAppError(error) || error.code !== "RATE_LIMITED") throw error;
    const retryAfterSeconds = Number(error.details?.retryAfterSeconds);
    const limitPerMinute = Number(error.details?.limit);
    throw new AppError(
      "RATE_LIMITED",
      `This API key made more than ${limitPerMinute} requests in a minute; retry in ${retryAfterSeconds} s.`,
      { retryAfterSeconds, limitPerMinute },
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
