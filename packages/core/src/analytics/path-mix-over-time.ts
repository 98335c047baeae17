import { z } from "zod";
import { StartPath } from "../vocabulary/index.ts";
import type { ColdStartSample } from "./cold-start-sample.ts";

export const PathMixBucket = z.object({
  /** Start of the bucket (aligned to a multiple of its width since the epoch, UTC). */
  bucketStart: z.date(),
  /** Starts requested in [bucketStart, bucketStart + width) per path. */
  counts: z.record(StartPath, z.number()),
});
export type PathMixBucket = z.infer<typeof PathMixBucket>;

export const PathMixOverTime = z.object({
  bucketSeconds: z.number(),
  buckets: z.array(PathMixBucket),
});
export type PathMixOverTime = z.infer<typeof PathMixOverTime>;

/** Widths a reader can name: a minute, five, fifteen, an hour, six, a day, a week. */
export const BUCKET_WIDTHS_SECONDS = [60, 300, 900, 3_600, 21_600, 86_400, 604_800] as const;

/**
 * How the chosen paths shifted over time: starts counted per path in time buckets, the
 * narrowest named width that covers the span in at most `maxBuckets` buckets. Empty buckets
 * between the first and last start are kept so the time axis is even.
 */
export function pathMixOverTime(
  starts: readonly Pick<ColdStartSample, "requestedAt" | "path">[],
  maxBuckets = 24,
): PathMixOverTime {
  if (starts.length === 0) return { bucketSeconds: BUCKET_WIDTHS_SECONDS[0], buckets: [] };
  const times = starts.map((s) => s.requestedAt.getTime());
  const first = Math.min(...times);
  const last = Math.max(...times);
  const widthSeconds =
    BUCKET_WIDTHS_SECONDS.find(
      (w) => Math.floor(last / 1000 / w) - Math.floor(first / 1000 / w) + 1 <= maxBuckets,
    ) ?? BUCKET_WIDTHS_SECONDS[BUCKET_WIDTHS_SECONDS.length - 1]!;
  const width = widthSeconds * 1000;
  const firstBucket = Math.floor(first / width);
  const count = Math.floor(last / width) - firstBucket + 1;
  const buckets: PathMixBucket[] = Array.from({ length: count }, (_, i) => ({
    bucketStart: new Date((firstBucket + i) * width),
    counts: Object.fromEntries(StartPath.options.map((p) => [p, 0])) as Record<StartPath, number>,
  }));
  for (const start of starts)
    buckets[Math.floor(start.requestedAt.getTime() / width) - firstBucket]!.counts[start.path] += 1;
  return { bucketSeconds: widthSeconds, buckets };
}
