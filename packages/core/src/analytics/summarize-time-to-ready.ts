import { z } from "zod";
import { StartPath } from "../vocabulary/index.ts";
import type { ColdStartSample } from "./cold-start-sample.ts";
import { quantile } from "../statistics/index.ts";

/**
 * The sample every time-to-ready figure of an endpoint rests on (REST /status, the dashboard's
 * endpoint list and page): its latest closed starts, succeeded or failed, loaded by
 * load-cold-start-summaries.ts. Starts still running are left out, so a burst of them cannot
 * push the finished ones out of the window; the quantiles read the succeeded ones.
 */
export const TIME_TO_READY_WINDOW = 100;

export const TimeToReadySummary = z.object({
  /** Succeeded starts the quantiles are over. */
  samples: z.number(),
  p50Seconds: z.number().nullable(),
  p95Seconds: z.number().nullable(),
  /** Starts per path (any outcome): which paths the scheduler chose. */
  pathMix: z.record(StartPath, z.number()),
  /** When the most recent start was requested; null if none. */
  lastColdStartAt: z.date().nullable(),
});
export type TimeToReadySummary = z.infer<typeof TimeToReadySummary>;

/**
 * An endpoint's headline figures over the starts given (for an endpoint, its time-to-ready
 * window: load-cold-start-summaries.ts): time to ready (p50 / p95), path mix, last start.
 */
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
