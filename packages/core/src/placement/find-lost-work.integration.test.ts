import { useTestDatabase } from "@thaw/db/testing";
import { describe, expect, it } from "vitest";
import { findLostWork } from "./find-lost-work.ts";

const t = useTestDatabase();

describe("findLostWork", () => {
  it("walks the endpoints a slice a tick, in id order, wrapping round so that each is swept", async () => {
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
    const ticks: string[][] = [];
    let after: string | null = null;
    for (let tick = 0; tick < 4; tick++) {
      const work = await findLostWork({ db, after, limit: 2 });
      ticks.push(work.endpointIds);
      after = work.nextAfter;
    }
    expect(ticks).toEqual([
      [ids[0], ids[1]],
      [ids[2], ids[3]],
      [ids[4], ids[0]],
      [ids[1], ids[2]],
    ]);
    // A fleet no larger than a slice is swept whole every tick.
    const whole = await findLostWork({ db, after: ids[2]!, limit: 10 });
    expect(whole.endpointIds).toEqual([ids[3], ids[4], ids[0], ids[1], ids[2]]);
    expect(whole.nextAfter).toBeNull();
    expect((await findLostWork({ db, limit: 10 })).endpointIds).toEqual(ids);
  });
});
