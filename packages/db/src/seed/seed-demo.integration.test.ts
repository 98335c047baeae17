import { verifyPassword } from "better-auth/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../testing/index.ts";
import { DEMO_ENDPOINTS, DEMO_USER } from "./demo-catalog.ts";
import { seedDemo } from "./seed-demo.ts";

describe("seedDemo", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it("creates the demo org, its owner with a verifiable password, and every demo endpoint with an active deployment", async () => {
    const { orgId, userId } = await seedDemo(t.db);
    const membership = await t.db.membership.findUniqueOrThrow({
      where: { orgId_userId: { orgId, userId } },
    });
    expect(membership.role).toBe("owner");
    const account = await t.db.account.findFirstOrThrow({
      where: { userId, providerId: "credential" },
    });
    expect(await verifyPassword({ hash: account.password!, password: DEMO_USER.password })).toBe(
      true,
    );
    expect(await verifyPassword({ hash: account.password!, password: "wrong" })).toBe(false);
    const endpoints = await t.db.endpoint.findMany({
      where: { orgId },
      include: { activeDeployment: true },
    });
    expect(endpoints.map((e) => e.slug).sort()).toEqual(DEMO_ENDPOINTS.map((e) => e.slug).sort());
    const gptOss = endpoints.find((e) => e.slug === "gpt-oss-20b")!;
    expect(Number(gptOss.activeDeployment!.imageBytes)).toBeCloseTo(12.9e9, -8);
  });

  it("is idempotent: a second run creates nothing", async () => {
    const before = await Promise.all([
      t.db.user.count(),
      t.db.endpoint.count(),
      t.db.deployment.count(),
      t.db.membership.count(),
    ]);
    const { created } = await seedDemo(t.db);
    expect(created).toEqual([]);
    expect(
      await Promise.all([
        t.db.user.count(),
        t.db.endpoint.count(),
        t.db.deployment.count(),
        t.db.membership.count(),
      ]),
    ).toEqual(before);
  });
});
