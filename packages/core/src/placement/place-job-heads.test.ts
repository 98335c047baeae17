import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { placeJobHeads } from "./place-job-heads.ts";

describe("placeJobHeads", () => {
  it("takes the first of every batch, per deployment, in the given order", () => {
    const pending = [
      ...Array.from({ length: 5 }, (_, i) => ({ id: `a${i}`, deploymentId: "a" })),
      { id: "b0", deploymentId: "b" },
      { id: "a5", deploymentId: "a" },
    ];
    expect(placeJobHeads(pending, 2)).toEqual(["a0", "a2", "a4", "b0"]);
  });

  it("property: one head per started batch of each deployment, each a pending replica", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("d1", "d2", "d3"), { maxLength: 200 }),
        fc.integer({ min: 1, max: 40 }),
        (deployments, batch) => {
          const pending = deployments.map((deploymentId, i) => ({ id: `r${i}`, deploymentId }));
          const heads = placeJobHeads(pending, batch);
          for (const d of new Set(deployments)) {
            const count = deployments.filter((x) => x === d).length;
            const headsOf = heads.filter(
              (h) => pending.find((p) => p.id === h)!.deploymentId === d,
            );
            expect(headsOf).toHaveLength(Math.ceil(count / batch));
          }
          expect(new Set(heads).size).toBe(heads.length);
        },
      ),
    );
  });
});
