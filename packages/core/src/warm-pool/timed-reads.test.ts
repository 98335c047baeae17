import { describe, expect, it } from "vitest";
import { TimedReads } from "./timed-reads.ts";

describe("TimedReads", () => {
  it("shares one read among callers within its lifetime, then reads again", async () => {
    let now = 0;
    let reads = 0;
    const memo = new TimedReads<number>(1_000, () => now);
    const read = () => Promise.resolve(++reads);
    expect(await Promise.all([memo.get("org", read), memo.get("org", read)])).toEqual([1, 1]);
    now = 1_000;
    expect(await memo.get("org", read)).toBe(1);
    now = 1_001;
    expect(await memo.get("org", read)).toBe(2);
    expect(await memo.get("other", read)).toBe(3);
  });

  it("does not keep a failed read", async () => {
    const memo = new TimedReads<number>(1_000, () => 0);
    await expect(memo.get("org", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(await memo.get("org", () => Promise.resolve(7))).toBe(7);
  });
});
