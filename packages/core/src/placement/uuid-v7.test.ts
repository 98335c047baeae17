import { describe, expect, it } from "vitest";
import { uuidV7 } from "./uuid-v7.ts";

describe("uuidV7", () => {
  it("makes distinct version-7 ids that sort in the order they were made, across pool refills", () => {
    const ids = Array.from({ length: 1_000 }, () => uuidV7());
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.toSorted()).toEqual(ids);
  });
});
