// The price of waiting (issue 15): how many GPU-seconds of idle capacity Thaw may spend to
// save one second of one request's wait. Set per endpoint, defaulted per org, and above both
// by the platform; the warm pool weighs keep-alive and pre-warm against it.

/** The platform's price when neither the endpoint nor its org sets one. */
export const DEFAULT_GPU_SECONDS_PER_WAIT_SECOND = 4;

/** The largest price a user may set (latency first; past this the budget decides anyway). */
export const MAX_GPU_SECONDS_PER_WAIT_SECOND = 100_000;

export interface EffectiveWaitPrice {
  value: number;
  /** Which setting the value comes from: the endpoint's own, its org's default, or the platform's. */
  source: "endpoint" | "org" | "platform";
}

/** The price that holds for an endpoint: its own, else its org's default, else the platform's. */
export function effectiveWaitPrice(
  endpoint: number | null,
  org: number | null,
): EffectiveWaitPrice {
  if (endpoint !== null) return { value: endpoint, source: "endpoint" };
  if (org !== null) return { value: org, source: "org" };
  return { value: DEFAULT_GPU_SECONDS_PER_WAIT_SECOND, source: "platform" };
}
