import { createHash } from "node:crypto";
import { AppError } from "@thaw/core";
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from "rate-limiter-flexible";
import { env } from "../../env.ts";
import { readyWebRedis } from "../queue-producer.ts";

// Every request budget of the web tier, in one place (rate-limiter-flexible): counted in
// Redis, so every web process shares each budget, and checked before the work it guards is
// done. While Redis is unreachable an in-process limiter with the same budget stands in, so
// nothing runs unlimited.

export interface LimitRule {
  points: number;
  durationSeconds: number;
  /** What the 429 says was exceeded, e.g. "sign-in attempts for this account". */
  what: string;
}

/** The budgets; numbers from env are read at first use. */
export function limitRules() {
  const e = env();
  return {
    /** REST v1 requests per API key (THAW_REST_RATE_LIMIT_PER_MINUTE). */
    restPerKey: {
      points: e.THAW_REST_RATE_LIMIT_PER_MINUTE,
      durationSeconds: 60,
      what: "requests by this API key",
    },
    /** REST v1 requests by all of one org's keys (THAW_REST_RATE_LIMIT_PER_ORG_PER_MINUTE). */
    restPerOrg: {
      points: e.THAW_REST_RATE_LIMIT_PER_ORG_PER_MINUTE,
      durationSeconds: 60,
      what: "requests by this org's API keys",
    },
    /** Any REST or agent-API request per client address, before its credential is checked. */
    apiPerAddress: {
      points: e.THAW_API_RATE_LIMIT_PER_ADDRESS_PER_MINUTE,
      durationSeconds: 60,
      what: "API requests from this address",
    },
    /** Sign-in attempts per account, whichever way they come (form or /api/auth). */
    signInPerAccount: {
      points: e.THAW_SIGN_IN_ATTEMPTS_PER_ACCOUNT,
      durationSeconds: 15 * 60,
      what: "sign-in attempts for this account",
    },
    /** Sign-in attempts per client address. */
    signInPerAddress: {
      points: e.THAW_SIGN_IN_ATTEMPTS_PER_ADDRESS,
      durationSeconds: 15 * 60,
      what: "sign-in attempts from this address",
    },
    /** Any /api/auth request per client address (session reads, sign-out, …). */
    authPerAddress: {
      points: 300,
      durationSeconds: 60,
      what: "authentication requests from this address",
    },
    /** Live streams opened per user or API key (each holds a connection). */
    liveOpensPerPrincipal: {
      points: 60,
      durationSeconds: 60,
      what: "live streams opened by this user or key",
    },
  } satisfies Record<string, LimitRule>;
}
export type LimitName = keyof ReturnType<typeof limitRules>;

const limiters = new Map<LimitName, RateLimiterAbstract>();

async function limiterFor(name: LimitName): Promise<RateLimiterAbstract> {
  const existing = limiters.get(name);
  if (existing) return existing;
  const rule = limitRules()[name];
  const memory = new RateLimiterMemory({ points: rule.points, duration: rule.durationSeconds });
  const redis = await readyWebRedis();
  const limiter = redis
    ? new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${env().THAW_QUEUE_PREFIX}:rate:${name}`,
        points: rule.points,
        duration: rule.durationSeconds,
        insuranceLimiter: memory,
      })
    : memory;
  limiters.set(name, limiter);
  return limiter;
}

/** Keys that name a person (an email) are hashed: Redis holds no address book. */
export function limitKey(...parts: string[]): string {
  return createHash("sha256").update(parts.join("\0")).digest("base64url").slice(0, 32);
}

export interface Quota {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/** Takes one point of `key`'s budget; a spent budget is RATE_LIMITED with when to retry. */
export async function consumeLimit(name: LimitName, key: string): Promise<Quota> {
  const limiter = await limiterFor(name);
  try {
    const res = await limiter.consume(key);
    return {
      limit: limiter.points,
      remaining: res.remainingPoints,
      resetSeconds: Math.ceil(res.msBeforeNext / 1000),
    };
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    const retryAfterSeconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
    const rule = limitRules()[name];
    throw new AppError(
      "RATE_LIMITED",
      `Too many ${rule.what}: at most ${rule.points} in ${describeWindow(rule.durationSeconds)}; retry in ${retryAfterSeconds} s.`,
      { retryAfterSeconds, limit: rule.points, windowSeconds: rule.durationSeconds },
    );
  }
}

/** Gives one point of `key`'s budget back (one taken for a request another budget refused). */
export async function refundLimit(name: LimitName, key: string): Promise<void> {
  await (await limiterFor(name)).reward(key, 1);
}

/** Gives `key`'s budget back in full (a sign-in that succeeded clears its account's count). */
export async function resetLimit(name: LimitName, key: string): Promise<void> {
  await (await limiterFor(name)).delete(key);
}

function describeWindow(seconds: number): string {
  return seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
}
