import { useTestDatabase } from "@thaw/db/testing";
import { describe, expect, it } from "vitest";
import { recordSpendCapState } from "./record-spend-cap-state.ts";

// spend_cap.reached per episode on a real database: opened once however many runs hold back
// at the cap (even at once), ended by the first run that holds back none, then opened anew.

describe("recordSpendCapState", () => {
  const database = useTestDatabase();

  it("records spend_cap.reached once per episode", async () => {
    const db = database.current.db;
    const org = await db.org.create({ data: { slug: "capped", name: "Capped" } });
    const sub = await db.webhookSubscription.create({
      data: {
        id: crypto.randomUUID(),
        orgId: org.id,
        url: "https://hooks.example.com/cap",
        eventTypes: ["spend_cap.reached"],
        sealedSecret: "v1.x",
      },
    });
    const heldBack = [
      { gpuModel: "L40S", gpus: 2, reason: "spend cap $10/h reached ($9.00/h running)" },
    ];
    const run = (held: typeof heldBack, at: string) =>
      recordSpendCapState({
        db,
        orgId: org.id,
        capUsdPerHour: 10,
        heldBack: held,
        now: new Date(at),
      });

    const racing = await Promise.all([
      run(heldBack, "2026-11-27T01:00:00Z"),
      run(heldBack, "2026-11-27T01:00:01Z"),
      run(heldBack, "2026-11-27T01:00:02Z"),
    ]);
    expect(racing.flat()).toHaveLength(1);
    expect(await run(heldBack, "2026-11-27T01:05:00Z")).toEqual([]);
    expect(await run([], "2026-11-27T01:10:00Z")).toEqual([]);
    expect(
      (await db.org.findUniqueOrThrow({ where: { id: org.id } })).spendCapReachedAt,
    ).toBeNull();
    expect(await run(heldBack, "2026-11-27T02:00:00Z")).toHaveLength(1);
    const rows = await db.webhookDelivery.findMany({
      where: { subscriptionId: sub.id },
      orderBy: { createdAt: "asc" },
    });
    expect(rows.map((r) => (r.payload as { data: { reachedAt: string } }).data.reachedAt)).toEqual([
      expect.stringMatching(/^2026-11-27T01:00:0[012]\.000Z$/),
      "2026-11-27T02:00:00.000Z",
    ]);
  });
});
