import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StartPath } from "../vocabulary/index.ts";
import { BUCKET_WIDTHS_SECONDS, pathMixOverTime } from "./path-mix-over-time.ts";
import { sampleStart } from "./sample-fixtures.ts";

const T0 = Date.UTC(2026, 0, 5, 10, 0, 0);

describe("pathMixOverTime", () => {
  it("counts starts per path in aligned buckets, keeping empty buckets in between", () => {
    const mix = pathMixOverTime([
      sampleStart({ at: T0 + 10_000, path: "pull" }),
      sampleStart({ at: T0 + 20_000, path: "restore" }),
      sampleStart({ at: T0 + 3 * 60_000 + 5_000, path: "warm" }),
    ]);
    expect(mix.bucketSeconds).toBe(60);
    expect(mix.buckets.map((b) => b.bucketStart.getTime())).toEqual([
      T0,
      T0 + 60_000,
      T0 + 120_000,
      T0 + 180_000,
    ]);
    expect(mix.buckets[0]!.counts).toEqual({
      warm: 0,
      wake: 0,
      restore: 1,
      peer: 0,
      lazy: 0,
      pull: 1,
    });
    expect(mix.buckets[1]!.counts).toEqual({
      warm: 0,
      wake: 0,
      restore: 0,
      peer: 0,
      lazy: 0,
      pull: 0,
    });
    expect(mix.buckets[3]!.counts.warm).toBe(1);
  });

  it("widens the buckets to a named width when the span is long", () => {
    const mix = pathMixOverTime(
      [sampleStart({ at: T0 }), sampleStart({ at: T0 + 3 * 86_400_000 })],
      24,
    );
    expect(mix.bucketSeconds).toBe(21_600);
    expect(mix.buckets.length).toBeLessThanOrEqual(24);
    expect(pathMixOverTime([])).toEqual({ bucketSeconds: 60, buckets: [] });
  });

  it("conserves every start and stays within the bucket budget", () => {
    const start = fc.record({
      at: fc.integer({ min: T0, max: T0 + 30 * 86_400_000 }),
      path: fc.constantFrom(...StartPath.options),
    });
    fc.assert(
      fc.property(
        fc.array(start, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 2, max: 50 }),
        (starts, max) => {
          const mix = pathMixOverTime(
            starts.map((s) => sampleStart(s)),
            max,
          );
          const total = mix.buckets.reduce(
            (n, b) => n + StartPath.options.reduce((m, p) => m + b.counts[p], 0),
            0,
          );
          expect(total).toBe(starts.length);
          expect(BUCKET_WIDTHS_SECONDS).toContain(mix.bucketSeconds);
          if (mix.bucketSeconds !== BUCKET_WIDTHS_SECONDS.at(-1))
            expect(mix.buckets.length).toBeLessThanOrEqual(max);
          for (const p of StartPath.options)
            expect(mix.buckets.reduce((n, b) => n + b.counts[p], 0)).toBe(
              starts.filter((s) => s.path === p).length,
            );
        },
      ),
    );
  });
});
