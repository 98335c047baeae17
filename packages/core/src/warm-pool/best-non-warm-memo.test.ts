import { describe, expect, it } from "vitest";
import { BestNonWarmMemo } from "./best-non-warm-memo.ts";

describe("BestNonWarmMemo", () => {
  it("answers a prediction until its TTL has passed, then nothing", () => {
    let now = 1_000;
    const memo = new BestNonWarmMemo(60_000, () => now);
    expect(memo.fresh("e1")).toBeUndefined();
    memo.remember("e1", { deploymentId: "d1", seconds: 42.5 });
    now += 60_000;
    expect(memo.fresh("e1")).toEqual({ deploymentId: "d1", seconds: 42.5 });
    now += 1;
    expect(memo.fresh("e1")).toBeUndefined();
  });

  it("lives the share of the TTL it was given when remembered", () => {
    let now = 0;
    const shares = [0.5, 1];
    const memo = new BestNonWarmMemo(
      60_000,
      () => now,
      10,
      () => shares.shift()!,
    );
    memo.remember("half", { deploymentId: "d", seconds: 1 });
    memo.remember("whole", { deploymentId: "d", seconds: 2 });
    now = 30_001;
    expect(memo.fresh("half")).toBeUndefined();
    expect(memo.fresh("whole")).toEqual({ deploymentId: "d", seconds: 2 });
  });

  it("keeps a prediction of no feasible start (null) as a prediction", () => {
    const memo = new BestNonWarmMemo(60_000, () => 0);
    memo.remember("e1", { deploymentId: "d1", seconds: null });
    expect(memo.fresh("e1")).toEqual({ deploymentId: "d1", seconds: null });
  });

  it("forgets an endpoint on request, and the stale ones first when full", () => {
    let now = 0;
    const memo = new BestNonWarmMemo(10, () => now, 2);
    memo.remember("old", { deploymentId: "d", seconds: 1 });
    now = 20;
    memo.remember("new", { deploymentId: "d", seconds: 2 });
    memo.remember("newer", { deploymentId: "d", seconds: 3 });
    expect(memo.fresh("new")).toEqual({ deploymentId: "d", seconds: 2 });
    expect(memo.fresh("newer")).toEqual({ deploymentId: "d", seconds: 3 });
    memo.forget("new");
    expect(memo.fresh("new")).toBeUndefined();
  });
  it("keeps a shared prediction for the lifetime it was given, never past its own TTL", () => {
    let now = 0;
    const memo = new BestNonWarmMemo(60_000, () => now);
    expect(memo.remember("shared", { deploymentId: "d", seconds: 1 }, 10_000)).toBe(10_000);
    expect(memo.remember("long", { deploymentId: "d", seconds: 2 }, 600_000)).toBe(60_000);
    now = 10_001;
    expect(memo.fresh("shared")).toBeUndefined();
    now = 60_000;
    expect(memo.fresh("long")).toEqual({ deploymentId: "d", seconds: 2 });
  });
});
