import { useTestDatabase } from "@thaw/db/testing";
import { describe, expect, it } from "vitest";
import { findSweepSlice } from "./find-lost-work.ts";

const t = useTestDatabase();

describe("findSweepSlice", () => {
  it("walks the endpoints a slice at a time, in id order, to the last", async () => {
    const org = await t.current.db.org.create({ data: { slug: "sweep", name: "Sweep" } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (
          await t.current.db.endpoint.create({
            data: { orgId: org.id, slug: `e${i}`, name: `e${i}`, gpuType: "A10G" },
          })
        ).id,
      );
    ids.sort();
    const db = t.current.db;
    const slices: string[][] = [];
    let after: string | null = null;
    do {
      const slice = await findSweepSlice({ db, after, limit: 2 });
      slices.push(slice.endpointIds);
      after = slice.nextAfter;
    } while (after !== null);
    expect(slices).toEqual([[ids[0], ids[1]], [ids[2], ids[3]], [ids[4]]]);
    // A slice that fills exactly leaves the walk's end to the next one, which is empty.
    expect(await findSweepSlice({ db, after: ids[2]!, limit: 2 })).toEqual({
      endpointIds: [ids[3], ids[4]],
      nextAfter: ids[4],
    });
    expect(await findSweepSlice({ db, after: ids[4]!, limit: 2 })).toEqual({
      endpointIds: [],
      nextAfter: null,
    });
    // A deleted endpoint is walked while it still has replicas to stop, and not after.
    await db.endpoint.update({ where: { id: ids[1]! }, data: { deletedAt: new Date() } });
    expect((await findSweepSlice({ db, limit: 10 })).endpointIds).toEqual(
      ids.filter((id) => id !== ids[1]),
    );
  });
});
