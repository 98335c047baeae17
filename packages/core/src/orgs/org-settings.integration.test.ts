import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import { getOrgSettings, setOrgSettings } from "./index.ts";

// The org's own settings: its default price of waiting and its warm-pool GPU
// budget, read and set by its admins and owners only, validated, audited with before/after.

describe("an org's settings", () => {
  let t: TestDatabase;
  let orgId: string;
  let actors: Record<"viewer" | "member" | "admin" | "owner", Actor>;

  beforeAll(async () => {
    t = await createTestDatabase();
    const seeded = await seedDemo(t.db);
    orgId = seeded.orgId;
    const as = (role: "viewer" | "member" | "admin" | "owner"): Actor => ({
      type: "user",
      userId: seeded.userId,
      orgId,
      role,
    });
    actors = { viewer: as("viewer"), member: as("member"), admin: as("admin"), owner: as("owner") };
  });
  afterAll(async () => {
    await t.drop();
  });

  const stored = () =>
    t.db.org.findUniqueOrThrow({
      where: { id: orgId },
      select: { gpuSecondsPerWaitSecond: true, warmPoolGpuBudget: true },
    });

  it("start at the defaults above the org", async () => {
    expect(await getOrgSettings({ actor: actors.admin, db: t.db })).toEqual({
      gpuSecondsPerWaitSecond: null,
      effectiveGpuSecondsPerWaitSecond: {
        value: null,
        source: "platform",
      },
      warmPoolGpuBudget: null,
    });
  });

  it("are set by an admin, audited with before and after, and back to the defaults with null", async () => {
    const set = await setOrgSettings({
      actor: actors.admin,
      input: { gpuSecondsPerWaitSecond: 30, warmPoolGpuBudget: 6 },
      db: t.db,
    });
    expect(set).toEqual({
      gpuSecondsPerWaitSecond: 30,
      effectiveGpuSecondsPerWaitSecond: { value: 30, source: "org" },
      warmPoolGpuBudget: 6,
    });
    expect(await stored()).toEqual({ gpuSecondsPerWaitSecond: 30, warmPoolGpuBudget: 6 });

    // One setting at a time: the other keeps its value.
    await setOrgSettings({ actor: actors.owner, input: { warmPoolGpuBudget: null }, db: t.db });
    expect(await stored()).toEqual({ gpuSecondsPerWaitSecond: 30, warmPoolGpuBudget: null });
    await setOrgSettings({
      actor: actors.owner,
      input: { gpuSecondsPerWaitSecond: null },
      db: t.db,
    });
    expect(await stored()).toEqual({ gpuSecondsPerWaitSecond: null, warmPoolGpuBudget: null });

    const entries = await t.db.auditLog.findMany({
      where: { orgId, action: "org.settings_changed" },
      orderBy: { createdAt: "asc" },
    });
    expect(entries.map((e) => [e.actorType, e.targetId, e.metadata])).toEqual([
      [
        "user",
        orgId,
        {
          before: { gpuSecondsPerWaitSecond: null, warmPoolGpuBudget: null },
          after: { gpuSecondsPerWaitSecond: 30, warmPoolGpuBudget: 6 },
        },
      ],
      [
        "user",
        orgId,
        {
          before: { gpuSecondsPerWaitSecond: 30, warmPoolGpuBudget: 6 },
          after: { gpuSecondsPerWaitSecond: 30, warmPoolGpuBudget: null },
        },
      ],
      [
        "user",
        orgId,
        {
          before: { gpuSecondsPerWaitSecond: 30, warmPoolGpuBudget: null },
          after: { gpuSecondsPerWaitSecond: null, warmPoolGpuBudget: null },
        },
      ],
    ]);
  });

  it.each(["viewer", "member"] as const)("are neither read nor set by a %s", async (role) => {
    const auditsBefore = await t.db.auditLog.count();
    await expect(getOrgSettings({ actor: actors[role], db: t.db })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(
      setOrgSettings({ actor: actors[role], input: { warmPoolGpuBudget: 100 }, db: t.db }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await stored()).toEqual({ gpuSecondsPerWaitSecond: null, warmPoolGpuBudget: null });
    expect(await t.db.auditLog.count()).toBe(auditsBefore);
  });

  it.each<[string, unknown, string]>([
    ["a negative price", { gpuSecondsPerWaitSecond: -0.1 }, "body.gpuSecondsPerWaitSecond"],
    [
      "a price over the ceiling",
      { gpuSecondsPerWaitSecond: 100_001 },
      "body.gpuSecondsPerWaitSecond",
    ],
    ["a price as a string", { gpuSecondsPerWaitSecond: "4" }, "body.gpuSecondsPerWaitSecond"],
    ["a fractional budget", { warmPoolGpuBudget: 1.5 }, "body.warmPoolGpuBudget"],
    ["a negative budget", { warmPoolGpuBudget: -1 }, "body.warmPoolGpuBudget"],
    ["a budget over the ceiling", { warmPoolGpuBudget: 100_001 }, "body.warmPoolGpuBudget"],
    [
      "a good price beside a bad budget",
      { gpuSecondsPerWaitSecond: 8, warmPoolGpuBudget: -1 },
      "body.warmPoolGpuBudget",
    ],
    ["an unknown field", { maxGpus: 1000 }, "body.maxGpus"],
  ])("refuse %s, naming the field, storing nothing", async (_, input, field) => {
    const auditsBefore = await t.db.auditLog.count();
    await expect(
      setOrgSettings({ actor: actors.admin, input, db: t.db, where: "body" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", details: { field } });
    expect(await stored()).toEqual({ gpuSecondsPerWaitSecond: null, warmPoolGpuBudget: null });
    expect(await t.db.auditLog.count()).toBe(auditsBefore);
  });

  it("refuse an empty change", async () => {
    await expect(
      setOrgSettings({ actor: actors.admin, input: {}, db: t.db }),
    ).rejects.toMatchObject({ code: "UNPROCESSABLE" });
  });
});
