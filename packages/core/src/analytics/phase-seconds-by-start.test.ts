import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Phase } from "../vocabulary/index.ts";
import { phaseSecondsByStart } from "./phase-seconds-by-start.ts";
import { sampleStart } from "./sample-fixtures.ts";

describe("phaseSecondsByStart", () => {
  it("orders starts oldest first, sums repeated phases and counts a running phase as 0", () => {
    const late = sampleStart({
      at: 2_000,
      phases: [
        ["pull", 30],
        ["create", 1],
        ["pull", 5],
      ],
    });
    const early = sampleStart({
      at: 1_000,
      path: "warm",
      phases: [
        ["handover", 0.5],
        ["ready", null],
      ],
    });
    const rows = phaseSecondsByStart([late, early]);
    expect(rows.map((r) => r.id)).toEqual([early.id, late.id]);
    expect(rows[1]!.seconds.pull).toBe(35);
    expect(rows[1]!.seconds.create).toBe(1);
    expect(rows[1]!.seconds.warmup).toBe(0);
    expect(rows[1]!.totalSeconds).toBe(36);
    expect(rows[0]).toMatchObject({ path: "warm", totalSeconds: 0.5 });
  });

  it("each bar's total is the sum of its phases, and every phase has a value", () => {
    const phase = fc.tuple(
      fc.constantFrom(...Phase.options),
      fc.option(fc.double({ min: 0, max: 1e4, noNaN: true }), { nil: null }),
    );
    fc.assert(
      fc.property(fc.array(fc.array(phase, { maxLength: 20 }), { maxLength: 10 }), (starts) => {
        const rows = phaseSecondsByStart(starts.map((phases, i) => sampleStart({ at: i, phases })));
        rows.forEach((row, i) => {
          expect(Object.keys(row.seconds).sort()).toEqual([...Phase.options].sort());
          const sum = starts[i]!.reduce((s, [, v]) => s + (v ?? 0), 0);
          expect(row.totalSeconds).toBeCloseTo(sum, 6);
        });
      }),
    );
  });
});
