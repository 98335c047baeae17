import { StartPath } from "../vocabulary/index.ts";
import type { ColdStartSample } from "./cold-start-sample.ts";
import { quantile } from "./quantile.ts";

export interface TimeToReadySummary {
  /** Succeeded starts the quantiles are over. */
  samples: number;
  p50Seconds: number | null;
  p95Seconds: number | null;
  /** Starts per path (any outcome): which paths the scheduler chose. */
  pathMix: Record<StartPath, number>;
  /** When the most recent start was requested; null if none. */
  lastColdStartAt: Date | null;
}

/** An endpoint's headline figures: time to ready (p50 / p95), path mix, last cold start. */
export function summarizeTimeToReady(
  starts: readonly Pick<ColdStartSample, "requestedAt" | "path" | "status" | "actualSeconds">[],
): TimeToReadySummary {
  const ready = starts
    .filter((s) => s.status === "succeeded" && s.actualSeconds !== null)
    .map((s) => s.actualSeconds!);
  const pathMix = Object.fromEntries(StartPath.options.map((p) => [p, 0])) as Record<
    StartPath,
    number
  >;
  let last: number | null = null;
  for (const s of starts) {
    pathMix[s.path] += 1;
    last = Math.max(last ?? -Infinity, s.requestedAt.getTime());
  }
  return {
    samples: ready.length,
    p50Seconds: quantile(ready, 0.5),
    p95Seconds: quantile(ready, 0.95),
    pathMix,
    lastColdStartAt: last === null ? null : new Date(last),
  };
}
