import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import { setOrgSettings } from "../orgs/index.ts";
import { TEST_DEPLOYMENT } from "../testing/index.ts";
import { createEndpoint, getEndpoint, listEndpointConfigs, updateEndpoint } from "./index.ts";

// An endpoint's price of waiting: set at creation or by PATCH, null to follow the
// org's default; validated like every other field, audited, and answered with the price that
// holds and where it comes from.

const BAD_PRICES: [string, unknown][] = [
  ["negative", -1],
  ["above the ceiling", 100_001],
  ["a string", "4"],
  ["a boolean", true],
  ["an object", { value: 4 }],
];

describe("an endpoint's price of waiting", () => {
  let t: TestDatabase;
  let member: Actor;
  let admin: Actor;
  let serial = 0;

  beforeAll(async () => {
    t = await createTestDatabase();
    const { orgId, userId } = await seedDemo(t.db);
    member = { type: "user", userId, orgId, role: "member" };
    admin = { type: "user", userId, orgId, role: "admin" };
  });
  afterAll(async () => {
    await t.drop();
  });

  const input = (extra: Record<string, unknown> = {}) => ({
    slug: `wait-price-${++serial}`,
    name: "Wait price",
    gpuType: "L40S",
    maxReplicas: 2,
    deployment: TEST_DEPLOYMENT,
    ...extra,
  });
  const create = async (extra: Record<string, unknown> = {}) =>
    (
      await createEndpoint({
        actor: member,
        input: input(extra),
        source: "api",
        where: "body",
        db: t.db,
      })
    ).result;
  const update = async (endpoint: string, changes: unknown) =>
    (
      await updateEndpoint({
        actor: member,
        endpoint,
        input: changes,
        source: "api",
        where: "body",
        db: t.db,
      })
    ).result;
  const audits = (targetId: string, action: string) =>
    t.db.auditLog.findMany({ where: { targetId, action }, orderBy: { createdAt: "asc" } });

  it("is the endpoint's own when set at creation, and the creation's audit records it", async () => {
    const created = await create({ gpuSecondsPerWaitSecond: 12.5 });
    expect(created.gpuSecondsPerWaitSecond).toBe(12.5);
    expect(created.effectiveGpuSecondsPerWaitSecond).toEqual({ value: 12.5, source: "endpoint" });
    const row = await t.db.endpoint.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.gpuSecondsPerWaitSecond).toBe(12.5);
    const [audit] = await audits(created.id, "endpoint.created");
    expect(audit?.metadata).toMatchObject({ gpuSecondsPerWaitSecond: 12.5 });
  });

  it("follows the org's default when unset (or null), else the platform's", async () => {
    const unset = await create();
    const nulled = await create({ gpuSecondsPerWaitSecond: null });
    for (const view of [unset, nulled]) {
      expect(view.gpuSecondsPerWaitSecond).toBeNull();
      expect(view.effectiveGpuSecondsPerWaitSecond).toEqual({
        value: null,
        source: "platform",
      });
    }
    await setOrgSettings({ actor: admin, input: { gpuSecondsPerWaitSecond: 0.5 }, db: t.db });
    try {
      const read = await getEndpoint({ actor: member, endpoint: unset.slug, db: t.db });
      expect(read.effectiveGpuSecondsPerWaitSecond).toEqual({ value: 0.5, source: "org" });
      const { endpoints } = await listEndpointConfigs({ actor: member, db: t.db });
      expect(endpoints.find((e) => e.id === nulled.id)?.effectiveGpuSecondsPerWaitSecond).toEqual({
        value: 0.5,
        source: "org",
      });
    } finally {
      await setOrgSettings({ actor: admin, input: { gpuSecondsPerWaitSecond: null }, db: t.db });
    }
  });

  it.each(BAD_PRICES)(
    "refuses a %s price at creation, naming the field, storing nothing",
    async (_, price) => {
      const before = {
        endpoints: await t.db.endpoint.count(),
        audits: await t.db.auditLog.count(),
      };
      const attempt = create({ gpuSecondsPerWaitSecond: price });
      await expect(attempt).rejects.toMatchObject({
        code: "BAD_REQUEST",
        details: { field: "body.gpuSecondsPerWaitSecond" },
      });
      expect({
        endpoints: await t.db.endpoint.count(),
        audits: await t.db.auditLog.count(),
      }).toEqual(before);
    },
  );

  it("changes by PATCH to a number and back to null, each change audited with before and after", async () => {
    const created = await create();
    const set = await update(created.slug, { gpuSecondsPerWaitSecond: 0 });
    expect(set.gpuSecondsPerWaitSecond).toBe(0);
    expect(set.effectiveGpuSecondsPerWaitSecond).toEqual({ value: 0, source: "endpoint" });
    expect(set.version).toBe(created.version + 1);

    const cleared = await update(created.slug, { gpuSecondsPerWaitSecond: null });
    expect(cleared.gpuSecondsPerWaitSecond).toBeNull();
    expect(cleared.effectiveGpuSecondsPerWaitSecond.source).toBe("platform");

    const entries = await audits(created.id, "endpoint.updated");
    expect(entries.map((e) => e.metadata)).toEqual([
      expect.objectContaining({
        before: { gpuSecondsPerWaitSecond: null },
        after: { gpuSecondsPerWaitSecond: 0 },
      }),
      expect.objectContaining({
        before: { gpuSecondsPerWaitSecond: 0 },
        after: { gpuSecondsPerWaitSecond: null },
      }),
    ]);
  });

  it.each(BAD_PRICES)(
    "refuses a %s price by PATCH, naming the field, changing nothing",
    async (_, price) => {
      const created = await create({ gpuSecondsPerWaitSecond: 3 });
      const before = await t.db.endpoint.findUniqueOrThrow({ where: { id: created.id } });
      const auditsBefore = await t.db.auditLog.count();
      await expect(
        update(created.slug, { gpuSecondsPerWaitSecond: price, minReplicas: 1 }),
      ).rejects.toMatchObject({
        code: "BAD_REQUEST",
        details: { field: "body.gpuSecondsPerWaitSecond" },
      });
      expect(await t.db.endpoint.findUniqueOrThrow({ where: { id: created.id } })).toEqual(before);
      expect(await t.db.auditLog.count()).toBe(auditsBefore);
    },
  );

  it("is changed only by those who may change endpoints", async () => {
    const created = await create({ gpuSecondsPerWaitSecond: 3 });
    const viewer: Actor = { ...member, role: "viewer" } as Actor;
    await expect(
      updateEndpoint({
        actor: viewer,
        endpoint: created.slug,
        input: { gpuSecondsPerWaitSecond: 9 },
        source: "dashboard",
        db: t.db,
      }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    const row = await t.db.endpoint.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.gpuSecondsPerWaitSecond).toBe(3);
  });
});
