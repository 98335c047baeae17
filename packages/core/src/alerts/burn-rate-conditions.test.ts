import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BURN_RATE_CONDITIONS,
  countStartsInWindows,
  evaluateBurnRates,
} from "./burn-rate-conditions.ts";

const now = new Date("2026-11-27T12:00:00Z");
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);

describe("evaluateBurnRates", () => {
  it("pages when an hour and its last five minutes both burn faster than 14.4", () => {
    // Objective 0.95: 14.4 × 5 % = 72 % bad. 8 of 10 starts in the hour, 2 of 2 in 5 minutes.
    const starts = [
      ...Array.from({ length: 8 }, (_, i) => ({ at: ago(600 + i * 60), good: false })),
      { at: ago(100), good: false },
      { at: ago(200), good: false },
    ];
    const result = evaluateBurnRates(countStartsInWindows(starts, now), 0.95);
    expect(result.firing.page).toEqual({
      severity: "page",
      longSeconds: 3_600,
      shortSeconds: 300,
      threshold: 14.4,
    });
  });

  it("does not fire on a burst that ended: the short window has reset", () => {
    const starts = Array.from({ length: 10 }, (_, i) => ({ at: ago(900 + i * 30), good: false }));
    const result = evaluateBurnRates(countStartsInWindows(starts, now), 0.95);
    // The hour burns at 20 but the last 5 minutes saw no start; 30 minutes and 6 hours still burn.
    expect(result.readings.find((r) => r.windowSeconds === 300)!.burnRate).toBe(0);
    expect(result.firing.page?.longSeconds).toBe(21_600);
  });

  it("opens a ticket for a slow, steady burn that no page condition reaches", () => {
    // A start an hour over 3 days, none in the last 30 minutes (no page can fire), every tenth
    // bad: 11 % bad at objective 0.95 burns at 2.2 over 3 days, and 3.3 over the last 6 hours.
    const starts = Array.from({ length: 72 }, (_, i) => ({
      at: ago(1_800 + i * 3_600),
      good: i % 10 !== 2,
    }));
    const result = evaluateBurnRates(countStartsInWindows(starts, now), 0.95);
    expect(result.firing).toEqual({
      page: null,
      ticket: { severity: "ticket", longSeconds: 259_200, shortSeconds: 21_600, threshold: 1 },
    });
  });

  it("burns nothing without starts", () => {
    expect(evaluateBurnRates([], 0.99).firing).toEqual({ page: null, ticket: null });
  });

  // The property, against a plain reference: a severity fires exactly when one of its
  // conditions' two windows both burn over its rate, and then with the first such condition.
  it("fires exactly when a condition's long and short windows both exceed its rate", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ ageSeconds: fc.integer({ min: 0, max: 300_000 }), good: fc.boolean() }),
          { maxLength: 60 },
        ),
        fc.constantFrom(0.9, 0.95, 0.99, 0.999),
        (raw, objective) => {
          const starts = raw.map((s) => ({ at: ago(s.ageSeconds), good: s.good }));
          const result = evaluateBurnRates(countStartsInWindows(starts, now), objective);
          const rateIn = (w: number) => {
            const inWindow = raw.filter((s) => s.ageSeconds < w);
            if (inWindow.length === 0) return 0;
            return inWindow.filter((s) => !s.good).length / inWindow.length / (1 - objective);
          };
          for (const severity of ["page", "ticket"] as const) {
            const expected = BURN_RATE_CONDITIONS.find(
              (c) =>
                c.severity === severity &&
                rateIn(c.longSeconds) > c.burnRate &&
                rateIn(c.shortSeconds) > c.burnRate,
            );
            expect(result.firing[severity]?.longSeconds ?? null).toBe(
              expected?.longSeconds ?? null,
            );
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
