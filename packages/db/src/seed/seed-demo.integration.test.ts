import { verifyPassword } from "better-auth/crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../testing/index.ts";
import { DEMO_ENDPOINTS, DEMO_USER } from "./demo-catalog.ts";
import { seedDemo } from "./seed-demo.ts";

describe("seedDemo", () => {
  const testDb = useTestDatabase();

  it("creates the demo org, its owner with a verifiable password, and every demo endpoint with an active deployment", async () => {
    const { orgId, userId } = await seedDemo(testDb.current.db);
    const membership = await testDb.current.db.membership.findUniqueOrThrow({
      where: { orgId_userId: { orgId, userId } },
    });
    expect(membership.role).toBe("owner");
    const account = await testDb.current.db.account.findFirstOrThrow({
      where: { userId, providerId: "credential" },
    });
    expect(await verifyPassword({ hash: account.password!, password: DEMO_USER.password })).toBe(
      true,
    );
    expect(await verifyPassword({ hash: account.password!, password: "wrong" })).toBe(false);
    const endpoints = await testDb.current.db.endpoint.findMany({
      where: { orgId },
      include: { activeDeployment: true },
    });
    expect(endpoints.map((e) => e.slug).sort()).toEqual(DEMO_ENDPOINTS.map((e) => e.slug).sort());
    const gptOss = endpoints.find((e) => e.slug === "gpt-oss-20b")!;
    expect(Number(gptOss.activeDeployment!.imageBytes)).toBeCloseTo(12.9e9, -8);
  });

  it("is idempotent: a second run creates nothing", async () => {
    const before = await Promise.all([
      testDb.current.db.user.count(),
      testDb.current.db.endpoint.count(),
      testDb.current.db.deployment.count(),
      testDb.current.db.membership.count(),
    ]);
    const { created } = await seedDemo(testDb.current.db);
    expect(created).toEqual([]);
    expect(
      await Promise.all([
        testDb.current.db.user.count(),
        testDb.current.db.endpoint.count(),
        testDb.current.db.deployment.count(),
        testDb.current.db.membership.count(),
      ]),
    ).toEqual(before);
  });
});
