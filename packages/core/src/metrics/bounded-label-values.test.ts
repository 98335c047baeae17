import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BoundedLabelValues, OVERFLOW_LABEL_VALUE } from "./bounded-label-values.ts";

describe("BoundedLabelValues", () => {
  it("never yields more than max distinct values besides the overflow, and keeps an admitted value's own label", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20 }),
        fc.array(fc.constantFrom(...Array.from({ length: 40 }, (_, i) => `e${i}`)), {
          maxLength: 300,
        }),
        (max, values) => {
          const labels = new BoundedLabelValues(max);
          const firstLabel = new Map<string, string>();
          const seen = new Set<string>();
          for (const value of values) {
            const label = labels.labelFor(value);
            // Plain reference: the first `max` distinct values are themselves, the rest overflow.
            if (!firstLabel.has(value)) {
              firstLabel.set(value, firstLabel.size < max ? value : OVERFLOW_LABEL_VALUE);
            }
            expect(label).toBe(firstLabel.get(value));
            seen.add(label);
          }
          seen.delete(OVERFLOW_LABEL_VALUE);
          expect(seen.size).toBeLessThanOrEqual(max);
        },
      ),
    );
  });

  it("refuses a negative or fractional bound", () => {
    expect(() => new BoundedLabelValues(-1)).toThrow(/non-negative integer/);
    expect(() => new BoundedLabelValues(1.5)).toThrow(/non-negative integer/);
  });
});
