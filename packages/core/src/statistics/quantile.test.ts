import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { quantile, quantiles } from "./quantile.ts";

const finite = fc.double({ min: -1e9, max: 1e9, noNaN: true });

describe("quantile", () => {
  it("is null for no values and interpolates between ranks like percentile_cont", () => {
    expect(quantile([], 0.5)).toBeNull();
    expect(quantile([7], 0.95)).toBe(7);
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([10, 0, 20], 0.5)).toBe(10);
    expect(quantile([0, 100], 0.95)).toBeCloseTo(95);
    expect(() => quantile([1], 1.5)).toThrow(RangeError);
  });

  it("lies within [min, max] and never decreases as q grows", () => {
    fc.assert(
      fc.property(
        fc.array(finite, { minLength: 1, maxLength: 50 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (values, a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          const qLo = quantile(values, lo)!;
          const qHi = quantile(values, hi)!;
          expect(qLo).toBeGreaterThanOrEqual(Math.min(...values));
          expect(qHi).toBeLessThanOrEqual(Math.max(...values));
          expect(qHi - qLo).toBeGreaterThanOrEqual(-1e-9 * Math.max(1, Math.abs(qLo)));
        },
      ),
    );
  });

  it("does not depend on the order of the values", () => {
    fc.assert(
      fc.property(fc.array(finite, { minLength: 1, maxLength: 30 }), (values) => {
        expect(quantile([...values].reverse(), 0.95)).toBe(quantile(values, 0.95));
      }),
    );
  });

  it("gives several quantiles of one sample, each as quantile gives it alone", () => {
    expect(quantiles([], [0.5, 0.95])).toEqual([null, null]);
    expect(quantiles([4, 1, 3, 2], [0, 0.5, 1])).toEqual([1, 2.5, 4]);
    expect(() => quantiles([1], [0.5, -0.1])).toThrow(RangeError);
    fc.assert(
      fc.property(
        fc.array(finite, { maxLength: 30 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 5 }),
        (values, qs) => {
          expect(quantiles(values, qs)).toEqual(qs.map((q) => quantile(values, q)));
        },
      ),
    );
  });
});
