import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EventQueue } from "./event-queue.ts";

describe("the replay's event queue", () => {
  it("pops in time order, ties in the order they were pushed", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }), (times) => {
        const queue = new EventQueue<number>();
        times.forEach((t, i) => queue.push(t, i));
        const popped: [number, number][] = [];
        for (let e = queue.pop(); e; e = queue.pop()) popped.push([e.at, e.item]);
        const expected = times.map((t, i) => [t, i] as [number, number]);
        expected.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        expect(popped).toEqual(expected);
      }),
    );
  });
});
