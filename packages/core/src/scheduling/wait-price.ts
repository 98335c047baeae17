// The price of waiting: how many GPU-seconds of idle capacity Thaw may spend to
// save one second of one request's wait. Set per endpoint, defaulted per org; the warm pool
// weighs keep-alive and pre-warm against it. Where neither sets one, the platform's default
// is not a price but a budget: no more idle GPU time than a 10-minute keep-alive would spend,
// spent where it saves the most wait — what any serverless default already costs, put to
// better use. (A single price cannot be that: the wait one miss costs differs by orders of
// magnitude between a quiet endpoint and a bursty one.)

/** What the platform's default does, in words (dashboard, CLI, API descriptions). */
export const PLATFORM_WAIT_OBJECTIVE =
  "the platform's default: no more idle GPU time than a 10-minute keep-alive, spent where it saves the most wait";

/** A price a benchmark or an example may use: 4 GPU-seconds per second of wait. */
export const EXAMPLE_GPU_SECONDS_PER_WAIT_SECOND = 4;

/** The largest price a user may set (latency first; past this the budget decides anyway). */
export const MAX_GPU_SECONDS_PER_WAIT_SECOND = 100_000;

export interface EffectiveWaitPrice {
  /** Null: no price — the platform's default objective (PLATFORM_WAIT_OBJECTIVE). */
  value: number | null;
  /** Which setting the value comes from: the endpoint's own, its org's default, or the platform's. */
  source: "endpoint" | "org" | "platform";
}

/** The price that holds for an endpoint: its own, else its org's default, else none (the platform's objective). */
export function effectiveWaitPrice(
  endpoint: number | null,
  org: number | null,
): EffectiveWaitPrice {
  if (endpoint !== null) return { value: endpoint, source: "endpoint" };
  if (org !== null) return { value: org, source: "org" };
  return { value: null, source: "platform" };
}
