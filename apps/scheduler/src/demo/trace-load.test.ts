import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { inFlightCounter } from "./trace-load.ts";

const request = (at: number, seconds: number) => ({ at, seconds, endpoint: "e" });

describe("inFlightCounter", () => {
  it("counts a request from its arrival until its service time has passed", () => {
    const count = inFlightCounter([request(5, 10), request(0, 3), request(6, 1)]);
    expect([0, 2.9, 3, 5, 6.5, 7, 14.9, 15].map(count)).toEqual([1, 1, 0, 1, 2, 1, 1, 0]);
  });

  it("refuses time going backwards instead of answering wrong", () => {
    const count = inFlightCounter([request(0, 1)]);
    count(5);
    expect(() => count(4)).toThrow(RangeError);
  });

  it("agrees with counting every request at every query time", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(1000), fc.integer({ min: 1, max: 200 })), { maxLength: 200 }),
        fc.array(fc.nat(1300), { maxLength: 50 }),
        (pairs, times) => {
          const requests = pairs.map(([at, s]) => request(at, s / 10));
          const count = inFlightCounter(requests);
          for (const t of [...times].sort((a, b) => a - b))
            expect(count(t)).toBe(requests.filter((r) => r.at <= t && t < r.at + r.seconds).length);
        },
      ),
    );
  });
});
