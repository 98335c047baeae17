import { describe, expect, it } from "vitest";
import { groupCommit } from "./group-commit.ts";

/** A store whose calls wait until the test lets them finish; it records each group. */
function heldStore() {
  const groups: number[][] = [];
  const release: (() => void)[] = [];
  let failNext: Error | null = null;
  const store = async (items: number[]) => {
    groups.push(items);
    const error = failNext;
    failNext = null;
    await new Promise<void>((r) => release.push(r));
    if (error) throw error;
    return items.map((n) => n * 10);
  };
  const settle = () => new Promise((r) => setImmediate(r));
  return {
    store,
    groups,
    failNextWith: (error: Error) => (failNext = error),
    /** Lets the oldest running store call finish. */
    finishOne: async () => {
      release.shift()!();
      await settle();
    },
    settle,
  };
}

describe("groupCommit", () => {
  it("a call that finds a slot free goes at once and alone", async () => {
    const s = heldStore();
    const submit = groupCommit({
      store: s.store,
      maxInFlight: 1,
      maxGroupWeight: 10,
      weigh: () => 1,
    });
    const answer = submit(1);
    await s.settle();
    expect(s.groups).toEqual([[1]]);
    await s.finishOne();
    await expect(answer).resolves.toBe(10);
  });

  it("calls that arrive while the slots are busy go together, in order, each with its own answer", async () => {
    const s = heldStore();
    const submit = groupCommit({
      store: s.store,
      maxInFlight: 2,
      maxGroupWeight: 10,
      weigh: () => 1,
    });
    const answers = [1, 2, 3, 4, 5].map((n) => submit(n));
    await s.settle();
    expect(s.groups).toEqual([[1], [2]]);
    await s.finishOne();
    expect(s.groups).toEqual([[1], [2], [3, 4, 5]]);
    await s.finishOne();
    await s.finishOne();
    await expect(Promise.all(answers)).resolves.toEqual([10, 20, 30, 40, 50]);
  });

  it("a group carries at most maxGroupWeight; an item heavier than that still goes, alone", async () => {
    const s = heldStore();
    const submit = groupCommit({
      store: s.store,
      maxInFlight: 1,
      maxGroupWeight: 5,
      weigh: (n) => n,
    });
    const answers = [1, 2, 2, 2, 9, 1].map((n) => submit(n));
    await s.settle();
    for (let i = 0; i < 4; i++) await s.finishOne();
    expect(s.groups).toEqual([[1], [2, 2], [2], [9], [1]].slice(0, s.groups.length));
    await s.finishOne();
    expect(s.groups).toEqual([[1], [2, 2], [2], [9], [1]]);
    await expect(Promise.all(answers)).resolves.toEqual([10, 20, 20, 20, 90, 10]);
  });

  it("a store that throws fails every call of its group and no other", async () => {
    const s = heldStore();
    const submit = groupCommit({
      store: s.store,
      maxInFlight: 1,
      maxGroupWeight: 10,
      weigh: () => 1,
    });
    const first = submit(1);
    await s.settle();
    s.failNextWith(new Error("database down"));
    // Settled as they go, so that their rejections are handled when they happen.
    const failing = Promise.allSettled([submit(2), submit(3)]);
    await s.finishOne();
    const later = submit(4);
    await s.finishOne();
    await s.finishOne();
    await expect(first).resolves.toBe(10);
    expect((await failing).map((f) => f.status === "rejected" && String(f.reason))).toEqual([
      "Error: database down",
      "Error: database down",
    ]);
    await expect(later).resolves.toBe(40);
    expect(s.groups).toEqual([[1], [2, 3], [4]]);
  });
});
