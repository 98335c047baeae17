import { AppError, isAppError } from "@thaw/core";
import { consumeLimit, refundLimit, type Quota } from "../limits/rate-limits.ts";

// REST v1's budgets per key (THAW_REST_RATE_LIMIT_PER_MINUTE) and per org over all its keys
// (THAW_REST_RATE_LIMIT_PER_ORG_PER_MINUTE), two of the web tier's shared limits
// (limits/rate-limits.ts), with the answer REST clients already know.

export type RestQuota = Quota;

/**
 * Takes one request from the key's budget and from its org's; a spent budget is a 429 with
 * when to retry. The answer's RateLimit headers describe whichever budget is closer to empty.
 *
 * Both are charged at once (one Redis round trip on every REST call, not two in a row), and a
 * request its key refuses gives the org its point back: a key that spends its own minute does
 * not also spend its org's, which the org's other keys share. (Until the point is back, the
 * org's count is one over: a refused request at the org's very edge may refuse one more.)
 */
export async function consumeRestQuota(actor: {
  apiKeyId: string;
  orgId: string;
}): Promise<RestQuota> {
  const [key, org] = await Promise.allSettled([
    consume("restPerKey", actor.apiKeyId, "This API key"),
    consume("restPerOrg", actor.orgId, "This org's API keys together"),
  ]);
  if (key.status === "rejected") {
    if (isRefusal(key.reason)) await refundLimit("restPerOrg", actor.orgId);
    throw key.reason;
  }
  if (org.status === "rejected") throw org.reason;
  return org.value.remaining < key.value.remaining ? org.value : key.value;
}

function isRefusal(error: unknown): boolean {
  return isAppError(error) && error.code === "RATE_LIMITED";
}

async function consume(
  name: "restPerKey" | "restPerOrg",
  key: string,
  who: string,
): Promise<RestQuota> {
  try {
    return await consumeLimit(name, key);
  } catch (error) {
    if (!isAppError(error) || error.code !== "RATE_LIMITED") throw error;
    const retryAfterSeconds = Number(error.details?.retryAfterSeconds);
    const limitPerMinute = Number(error.details?.limit);
    throw new AppError(
      "RATE_LIMITED",
      `${who} made more than ${limitPerMinute} requests in a minute; retry in ${retryAfterSeconds} s.`,
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
