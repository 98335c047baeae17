import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ReplicaPendingCause } from "../vocabulary/index.ts";
import { isWaitingForCapacity, outdatedReplicasToKeep } from "./outdated-replicas-to-keep.ts";

describe("outdatedReplicasToKeep (rolling a new version)", () => {
  it("keeps every old serving replica until new ones are ready, then hands over one for one", () => {
    const keep = (currentReady: number) =>
      outdatedReplicasToKeep({
        desired: 3,
        currentReady,
        currentWaitingForCapacity: 0,
        outdatedServing: 3,
      });
    expect([0, 1, 2, 3, 4].map(keep)).toEqual([3, 2, 1, 0, 0]);
  });

  it("gives up one old replica's GPUs when the new version is waiting for capacity", () => {
    expect(
      outdatedReplicasToKeep({
        desired: 3,
        currentReady: 0,
        currentWaitingForCapacity: 3,
        outdatedServing: 3,
      }),
    ).toBe(2);
  });

  it("never keeps more than serve, nor more than the new version still lacks; never strands the endpoint", () => {
    fc.assert(
      fc.property(
        fc.nat(20),
        fc.nat(20),
        fc.nat(20),
        fc.nat(20),
        (desired, currentReady, waiting, outdatedServing) => {
          const kept = outdatedReplicasToKeep({
            desired,
            currentReady,
            currentWaitingForCapacity: waiting,
            outdatedServing,
          });
          expect(kept).toBeGreaterThanOrEqual(0);
          expect(kept).toBeLessThanOrEqual(outdatedServing);
          expect(currentReady + kept).toBeLessThanOrEqual(Math.max(desired, currentReady));
          // At most one replica short of what could serve (old and new together).
          const couldServe = Math.min(desired, currentReady + outdatedServing);
          expect(currentReady + kept).toBeGreaterThanOrEqual(couldServe - 1);
          // With room for the new version, exactly what was serving keeps serving.
          if (waiting === 0)
            expect(currentReady + kept).toBe(
              Math.min(Math.max(desired, currentReady), currentReady + outdatedServing),
            );
        },
      ),
    );
  });

  it("recognises placement's no-capacity cause, and only that", () => {
    expect(isWaitingForCapacity("waiting_for_capacity")).toBe(true);
    for (const cause of ReplicaPendingCause.options.filter((c) => c !== "waiting_for_capacity"))
      expect(isWaitingForCapacity(cause), cause).toBe(false);
    expect(isWaitingForCapacity(null)).toBe(false);
  });
});
