import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TraceRequest } from "../replay/index.ts";
import { loadToRequests, type LoadMinute } from "./load-to-requests.ts";

// The recorded load rebuilt as arrivals must keep what the scheduler acts on: per minute, the
// peak concurrency (the autoscaler's panic sizes for it) and the slot-seconds (busy, so idle,
// GPU time). Checked against a plain reference: the concurrency each second of each minute,
// integrated from the requests one by one.

const from = new Date("2026-11-20T00:00:00Z");

/** Per minute index: the mean and the peak concurrency the requests make, second by second. */
function referenceConcurrency(requests: readonly TraceRequest[], unit: number) {
  const byMinute = new Map<number, { slotSeconds: number; atStart: number }>();
  for (const r of requests) {
    const minute = Math.floor(r.at / 60);
    const entry = byMinute.get(minute) ?? { slotSeconds: 0, atStart: 0 };
    // Each request stands for `unit` concurrent ones, held for its seconds within the minute.
    const end = Math.min(r.at + r.seconds, (minute + 1) * 60);
    entry.slotSeconds += (end - r.at) * unit;
    if (r.at === minute * 60 && r.seconds > 0) entry.atStart += unit;
    byMinute.set(minute, entry);
  }
  return byMinute;
}

const sampleArb = fc
  .record({
    max: fc.integer({ min: 1, max: 300 }),
    meanShare: fc.double({ min: 0.01, max: 1, noNaN: true }),
    signals: fc.integer({ min: 1, max: 60 }),
  })
  .map(({ max, meanShare, signals }) => ({
    maxConcurrency: max,
    sumConcurrency: max * meanShare * signals,
    signals,
  }));

const loadArb = fc.record({
  minutes: fc.uniqueArray(fc.integer({ min: 0, max: 20_000 }), { minLength: 1, maxLength: 60 }),
  samples: fc.array(sampleArb, { minLength: 60, maxLength: 60 }),
  concurrency: fc.integer({ min: 1, max: 600 }),
  budget: fc.integer({ min: 1, max: 5_000 }),
});

describe("load samples as replay arrivals", () => {
  it("keeps each minute's peak and slot-seconds, whatever unit the budget forces", () => {
    fc.assert(
      fc.property(loadArb, ({ minutes, samples, concurrency, budget }) => {
        const load: LoadMinute[] = minutes.map((m, i) => ({
          minute: new Date(from.getTime() + m * 60_000),
          ...samples[i]!,
        }));
        const { requests, unit, slotsPerReplica } = loadToRequests({
          samples: [...load].reverse(),
          from,
          endpoint: "e",
          concurrency,
          maxRequests: budget,
        });
        // A replica holds as much load as live: the unit divides its concurrency.
        expect(concurrency % unit).toBe(0);
        expect(slotsPerReplica * unit).toBe(concurrency);
        expect(slotsPerReplica).toBeLessThanOrEqual(256);
        // Within the budget, unless only a whole replica per request would do.
        if (unit < concurrency && concurrency / unit <= 256)
          expect(requests.length).toBeLessThanOrEqual(budget);
        // In time order.
        for (let i = 1; i < requests.length; i++)
          expect(requests[i]!.at).toBeGreaterThanOrEqual(requests[i - 1]!.at);
        const reference = referenceConcurrency(requests, unit);
        for (const sample of load) {
          const index = (sample.minute.getTime() - from.getTime()) / 60_000;
          const got = reference.get(index)!;
          const mean = sample.sumConcurrency / sample.signals;
          expect(got.slotSeconds).toBeCloseTo(mean * 60, 6);
          // The peak at the minute's start: the recorded one, rounded up to whole units.
          expect(got.atStart).toBeGreaterThanOrEqual(sample.maxConcurrency);
          expect(got.atStart).toBeLessThan(sample.maxConcurrency + unit);
        }
        // Nothing outside the recorded minutes.
        expect(reference.size).toBe(load.length);
      }),
      { numRuns: 200 },
    );
  });

  it("replays one request per unit of peak, each holding an equal share of the minute", () => {
    const { requests, unit } = loadToRequests({
      samples: [
        {
          minute: new Date(from.getTime() + 120_000),
          maxConcurrency: 4,
          sumConcurrency: 6,
          signals: 3,
        },
      ],
      from,
      endpoint: "e",
      concurrency: 8,
    });
    expect(unit).toBe(1);
    // mean 2 → 120 slot-seconds over 4 requests.
    expect(requests).toEqual(Array(4).fill({ at: 120, endpoint: "e", seconds: 30 }));
  });

  it("a minute without load, or whose signals all said 0, makes no request", () => {
    const { requests } = loadToRequests({
      samples: [{ minute: from, maxConcurrency: 0, sumConcurrency: 0, signals: 5 }],
      from,
      endpoint: "e",
      concurrency: 8,
    });
    expect(requests).toEqual([]);
  });
});
