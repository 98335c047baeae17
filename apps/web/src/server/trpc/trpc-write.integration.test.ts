// tRPC's write procedures (endpoints and deployments) on a real database: the same use cases
// as REST, errors naming the field, NaN and Infinity through superjson refused, nothing stored
// by a refused call. (REST's write side, and tRPC's HTTP limits, are tested through the built
// server in e2e/src/rest/endpoints-write.e2e.test.ts.)
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeWebTestResources, stubWebEnv, TEST_DEPLOYMENT } from "../testing/web-test-env.ts";
import type { TrpcContext } from "./init.ts";
import type * as RootModule from "./root.ts";

const deployment = TEST_DEPLOYMENT;
const endpointBody = (slug: string, extra: object = {}) => ({
  slug,
  name: "Llama 3.2 3B",
  gpuType: "L40S",
  minReplicas: 0,
  maxReplicas: 3,
  desiredReplicas: 1,
  deployment,
  ...extra,
});

describe("tRPC: creating, changing, rolling and deleting endpoints", () => {
  let t: TestDatabase;
  let root: typeof RootModule;
  let owner: { orgId: string };
  let demoUser: { id: string; email: string; name: string };

  const stored = async () => ({
    endpoints: await t.db.endpoint.count(),
    deployments: await t.db.deployment.count(),
    audit: await t.db.auditLog.count(),
    versions: (await t.db.endpoint.aggregate({ _sum: { version: true } }))._sum.version,
    desired: (await t.db.endpoint.aggregate({ _sum: { desiredReplicas: true } }))._sum
      .desiredReplicas,
  });

  beforeAll(async () => {
    t = await createTestDatabase();
    const seeded = await seedDemo(t.db);
    owner = { orgId: seeded.orgId };
    const u = await t.db.user.findUniqueOrThrow({ where: { id: seeded.userId } });
    demoUser = { id: u.id, email: u.email, name: u.name };
    stubWebEnv({ databaseUrl: t.url, queuePrefix: `trpc-write-${Date.now()}` });
    root = await import("./root.ts");
    // The endpoint the update and roll calls below refer to.
    await root
      .createCaller({ db: t.db, user: demoUser, orgSlug: undefined } satisfies TrpcContext)
      .endpoints.create(endpointBody("rest-llama"));
  });
  afterAll(async () => {
    await closeWebTestResources();
    await t.drop();
  });

  it("tRPC: the same use cases, errors naming the field, NaN and Infinity through superjson refused", async () => {
    const caller = root.createCaller({
      db: t.db,
      user: demoUser,
      orgSlug: undefined,
    } satisfies TrpcContext);
    const before = await stored();
    for (const [bad, field] of [
      [{ maxReplicas: Number.NaN }, "input.maxReplicas"],
      [{ maxReplicas: Infinity }, "input.maxReplicas"],
      [{ minReplicas: 0.5 }, "input.minReplicas"],
      [{ orgId: owner.orgId }, "input.orgId"],
    ] as const) {
      const error = await caller.endpoints
        .create(endpointBody("trpc-bad", bad) as never)
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "BAD_REQUEST", cause: { details: { field } } });
    }
    const update = await caller.endpoints
      .update({ endpoint: "rest-llama", changes: { objective: "p99" as never } })
      .catch((e: unknown) => e);
    expect(update).toMatchObject({ cause: { details: { field: "changes.objective" } } });
    const roll = await caller.deployments
      .create({ endpoint: "rest-llama", deployment: { ...deployment, imageBytes: -5 } })
      .catch((e: unknown) => e);
    expect(roll).toMatchObject({ cause: { details: { field: "deployment.imageBytes" } } });
    await expect(
      caller.deployments.list({ endpoint: "rest-llama", limit: 1e9 }),
    ).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    expect(await stored()).toEqual(before);

    const created = await caller.endpoints.create(endpointBody("trpc-made"));
    expect(created.activeDeployment?.version).toBe(1);
    const deleted = await caller.endpoints.delete({ endpoint: "trpc-made" });
    expect(deleted.slug).toBe("trpc-made");
    // The slug is free again, and the deleted endpoint is gone from every read.
    await expect(caller.deployments.list({ endpoint: "trpc-made" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });

  it("tRPC: the price of waiting through endpoints.create/update and the org's settings, bad values refused by field", async () => {
    const caller = root.createCaller({
      db: t.db,
      user: demoUser,
      orgSlug: undefined,
    } satisfies TrpcContext);
    const created = await caller.endpoints.create(
      endpointBody("trpc-priced", { gpuSecondsPerWaitSecond: 3 }),
    );
    expect(created.effectiveGpuSecondsPerWaitSecond).toEqual({ value: 3, source: "endpoint" });
    await caller.org.setSettings({ gpuSecondsPerWaitSecond: 9, warmPoolGpuBudget: 4 });
    expect(await caller.org.settings()).toMatchObject({
      gpuSecondsPerWaitSecond: 9,
      warmPoolGpuBudget: 4,
    });
    const cleared = await caller.endpoints.update({
      endpoint: "trpc-priced",
      changes: { gpuSecondsPerWaitSecond: null },
    });
    expect(cleared.effectiveGpuSecondsPerWaitSecond).toEqual({ value: 9, source: "org" });
    const detail = await caller.analytics.endpointDetail({ endpoint: "trpc-priced" });
    expect(detail.endpoint.effectiveGpuSecondsPerWaitSecond).toEqual({ value: 9, source: "org" });
    expect(detail.calibration).toMatchObject({ starts: 0, verdict: "no-starts" });

    const before = await stored();
    const settingsBefore = await caller.org.settings();
    for (const [call, field] of [
      [
        () =>
          caller.endpoints.create(endpointBody("trpc-bad-price", { gpuSecondsPerWaitSecond: -1 })),
        "input.gpuSecondsPerWaitSecond",
      ],
      [
        () =>
          caller.endpoints.update({
            endpoint: "trpc-priced",
            changes: { gpuSecondsPerWaitSecond: Number.NaN },
          }),
        "changes.gpuSecondsPerWaitSecond",
      ],
      [
        () => caller.org.setSettings({ gpuSecondsPerWaitSecond: Infinity }),
        "input.gpuSecondsPerWaitSecond",
      ],
      [() => caller.org.setSettings({ warmPoolGpuBudget: 2.5 }), "input.warmPoolGpuBudget"],
    ] as const) {
      const error = await (call as () => Promise<unknown>)().catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "BAD_REQUEST", cause: { details: { field } } });
    }
    expect(await stored()).toEqual(before);
    expect(await caller.org.settings()).toEqual(settingsBefore);
  });
});
