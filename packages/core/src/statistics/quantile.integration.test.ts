import { useTestDatabase } from "@thaw/db/testing";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { quantile } from "./quantile.ts";

// The definition quantile.ts claims, checked against its reference: PostgreSQL's own
// percentile_cont on the same values.

describe("quantile against PostgreSQL's percentile_cont", () => {
  const database = useTestDatabase();

  it("agrees on any values and any q", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 40 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (values, q) => {
          const [row] = await database.current.db.$queryRaw<{ p: number }[]>`
            SELECT percentile_cont(${q}::float8) WITHIN GROUP (ORDER BY v) AS p
            FROM unnest(${values}::float8[]) AS v`;
          const expected = row!.p;
          expect(quantile(values, q)).toBeCloseTo(expected, 6);
        },
      ),
      { numRuns: 60 },
    );
  });
});
