import {
  KEEPALIVE_MINUTES,
  lazyKeepAlive,
  PRICES,
  pullKeepAlive,
  replay,
  thaw,
  type EndpointSpec,
  type PolicyResult,
  type ReplayHost,
  type ReplayPolicy,
  type TraceRequest,
} from "../replay/index.ts";
import type { EffectiveWaitPrice } from "../scheduling/index.ts";
import type { WhatIfPoint } from "./what-if-schemas.ts";

// Which policies a what-if replays and how each run becomes a point of the answer: thaw at
// the endpoint's price today, over the price sweep bench:replay uses and at the platform's
// default objective (each of which the Apply button can set), and the fixed pull and lazy
// keep-alives (what a plain serverless platform would do, for comparison only).

/** The endpoint's name inside the replay (one endpoint: any name does). */
export const WHAT_IF_ENDPOINT = "endpoint";

export interface WhatIfRun {
  policy: ReplayPolicy;
  /** The price thaw runs at (null: the platform's default objective); fixed policies: null. */
  price: number | null;
}

/** Thaw at today's price, the sweep and the default; then the fixed keep-alives. */
export function whatIfRuns(current: EffectiveWaitPrice): WhatIfRun[] {
  const prices = [...PRICES];
  if (current.value !== null && !prices.includes(current.value)) prices.push(current.value);
  prices.sort((a, b) => a - b);
  return [
    { policy: thaw(null), price: null },
    ...prices.map((price) => ({ policy: thaw(price), price })),
    ...KEEPALIVE_MINUTES.map((m) => ({ policy: pullKeepAlive(m), price: null })),
    ...KEEPALIVE_MINUTES.map((m) => ({ policy: lazyKeepAlive(m), price: null })),
  ];
}

/**
 * Replays the runs one at a time, yielding after each: the caller may give its event loop a
 * turn between them (the scheduler's processor does), so a what-if never holds it for longer
 * than one policy's replay.
 */
export function* replayWhatIf(input: {
  requests: readonly TraceRequest[];
  spec: EndpointSpec;
  hosts: ReplayHost[];
  runs: readonly WhatIfRun[];
  seed?: number;
}): Generator<{ run: WhatIfRun; result: PolicyResult }> {
  const fleet = { hosts: input.hosts, endpoint: () => input.spec };
  for (const run of input.runs)
    yield {
      run,
      result: replay({
        requests: input.requests,
        fleet,
        policy: run.policy,
        ...(input.seed !== undefined ? { seed: input.seed } : {}),
      }),
    };
}

/**
 * One run as a point of the frontier. `usdPerGpuHour` prices its GPU-hours (null: the hosts
 * have no price). A thaw point can be applied: its price, or the default (null) — which the
 * endpoint reaches by clearing its own price only when its org sets none (else it would get
 * the org's price, which is another point).
 */
export function whatIfPoint(
  run: WhatIfRun,
  result: PolicyResult,
  o: { current: EffectiveWaitPrice; orgPrice: number | null; usdPerGpuHour: number | null },
): WhatIfPoint {
  const thawFamily = run.policy.family === "thaw";
  const current = thawFamily && run.price === o.current.value;
  let apply: WhatIfPoint["apply"] = null;
  if (thawFamily && !current) {
    if (run.price !== null) apply = { gpuSecondsPerWaitSecond: run.price };
    else if (o.orgPrice === null) apply = { gpuSecondsPerWaitSecond: null };
  }
  return {
    family: run.policy.family as WhatIfPoint["family"],
    setting: run.policy.setting,
    gpuSecondsPerWaitSecond: run.price,
    meanWaitSeconds: result.meanWaitSeconds,
    p99WaitSeconds: result.p99WaitSeconds,
    coldStartFraction: result.coldStartFraction,
    idleGpuHours: result.idleGpuHours,
    gpuHours: result.gpuHours,
    costUsd:
      o.usdPerGpuHour === null ? null : Math.round(result.gpuHours * o.usdPerGpuHour * 100) / 100,
    current,
    apply,
  };
}
