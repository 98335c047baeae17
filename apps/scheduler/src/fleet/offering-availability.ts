import { type Offering, offeringKey } from "@thaw/core";
import type { Redis } from "ioredis";

/**
 * Offerings refused for capacity, remembered for a TTL in Redis and shared by every scheduler
 * process. Losing them (a Redis wipe) only means asking EC2 once more.
 */
export class OfferingAvailability {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(offering: Offering): string {
    return `${this.prefix}:fleet:unavailable:${offeringKey(offering)}`;
  }

  async markUnavailable(offering: Offering, ttlSeconds: number, nowSeconds: number): Promise<void> {
    await this.redis.set(this.key(offering), String(nowSeconds + ttlSeconds), "EX", ttlSeconds);
  }

  /** offering key → until when it is unavailable (seconds). */
  async unavailableUntil(offerings: readonly Offering[]): Promise<Record<string, number>> {
    if (offerings.length === 0) return {};
    const values = await this.redis.mget(...offerings.map((o) => this.key(o)));
    const until: Record<string, number> = {};
    offerings.forEach((o, i) => {
      const value = values[i];
      if (value) until[offeringKey(o)] = Number(value);
    });
    return until;
  }
}
