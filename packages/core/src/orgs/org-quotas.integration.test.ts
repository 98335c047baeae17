import { DEMO_ENDPOINTS, seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../api-keys/index.ts";
import type { Actor } from "../auth/index.ts";
import { createEndpoint } from "../endpoints/index.ts";
import { TEST_DEPLOYMENT } from "../testing/index.ts";
import { getOrgQuotaUsage, setOrgQuotas, type OrgQuotas } from "./index.ts";

// One org's own quotas (issue 23, finding 8): the operator raises or lowers them for one org
// without touching every other org's default; they hold from the org's next write, show in
// the dashboard beside what the org holds, and are audited.

const seededGpus = DEMO_ENDPOINTS.reduce((n, e) => n + e.maxReplicas * e.gpuCount, 0);
const DEFAULTS: OrgQuotas = { endpoints: 500, apiKeys: 100, replicasPerEndpoint: 64, gpus: 256 };

describe("an org's own quotas", () => {
  let t: TestDatabase;
  let owner: Actor;
  let operator: Actor;

  beforeAll(async () => {
    t = await createTestDatabase();
    const { orgId, userId } = await seedDemo(t.db);
    owner = { type: "user", userId, orgId, role: "owner" };
    operator = { type: "system", orgId };
  });
  afterAll(async () => {
    await t.drop();
  });

  const endpoint = (slug: string, maxReplicas: number) => ({
    slug,
    name: slug,
    gpuType: "L40S",
    maxReplicas,
    deployment: TEST_DEPLOYMENT,
  });

  it("holds from the next write: lowered, a write past it is refused naming the command", async () => {
    await setOrgQuotas({ actor: operator, input: { gpus: seededGpus + 2, apiKeys: 1 }, db: t.db });
    const refusal = createEndpoint({
      actor: owner,
      source: "api",
      input: endpoint("three-wide", 3),
      db: t.db,
      quotas: DEFAULTS,
    });
    await expect(refusal).rejects.toMatchObject({
      code: "UNPROCESSABLE",
      details: { quota: "gpus", limit: seededGpus + 2 },
    });
    await expect(refusal).rejects.toThrow(
      /thaw admin org quota --org [a-z0-9-]+ --gpus <n>' for this org, or THAW_ORG_MAX_GPUS/,
    );
    await createEndpoint({
      actor: owner,
      source: "api",
      input: endpoint("two-wide", 2),
      db: t.db,
      quotas: DEFAULTS,
    });

    await createApiKey({
      actor: owner,
      input: { name: "one", scopes: ["endpoints:read"] },
      db: t.db,
      quotas: DEFAULTS,
    });
    await expect(
      createApiKey({
        actor: owner,
        input: { name: "two", scopes: ["endpoints:read"] },
        db: t.db,
        quotas: DEFAULTS,
      }),
    ).rejects.toMatchObject({ details: { quota: "apiKeys", limit: 1 } });
  });

  it("shows each quota beside what the org holds, and whose limit it is", async () => {
    const usage = await getOrgQuotaUsage({ actor: owner, db: t.db, defaults: DEFAULTS });
    expect(usage.quotas).toEqual([
      expect.objectContaining({ name: "endpoints", limit: 500, source: "default" }),
      expect.objectContaining({ name: "apiKeys", limit: 1, used: 1, source: "org" }),
      expect.objectContaining({ name: "replicasPerEndpoint", limit: 64, source: "default" }),
      expect.objectContaining({ name: "gpus", limit: seededGpus + 2, used: seededGpus + 2 }),
    ]);
    expect(usage.quotas[0]!.used).toBe(DEMO_ENDPOINTS.length + 1);
    // Null goes back to the default; raised, the write that was refused passes.
    await setOrgQuotas({ actor: operator, input: { gpus: null, apiKeys: null }, db: t.db });
    const after = await getOrgQuotaUsage({ actor: owner, db: t.db, defaults: DEFAULTS });
    expect(after.quotas.map((q) => q.source)).toEqual(["default", "default", "default", "default"]);
    await createEndpoint({
      actor: owner,
      source: "api",
      input: endpoint("three-wide", 3),
      db: t.db,
      quotas: DEFAULTS,
    });
  });

  it("is the operator's lever alone, checked like any input, and audited", async () => {
    await expect(
      setOrgQuotas({ actor: owner, input: { gpus: 1_000 }, db: t.db }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(setOrgQuotas({ actor: operator, input: {}, db: t.db })).rejects.toMatchObject({
      code: "UNPROCESSABLE",
    });
    await expect(
      setOrgQuotas({ actor: operator, input: { gpus: -1 }, db: t.db }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", details: { field: "input.gpus" } });
    await expect(
      setOrgQuotas({ actor: operator, input: { orgId: "x", gpus: 1 }, db: t.db }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    const set = await setOrgQuotas({
      actor: operator,
      input: { spendCapUsdPerHour: 12.5, endpoints: 40 },
      db: t.db,
    });
    expect(set).toMatchObject({ quotas: { endpoints: 40, gpus: null }, spendCapUsdPerHour: 12.5 });
    const audits = await t.db.auditLog.findMany({
      where: { orgId: operator.orgId, action: "org.quotas_changed" },
      orderBy: { createdAt: "asc" },
    });
    expect(audits).toHaveLength(3);
    expect(audits.at(-1)).toMatchObject({
      actorType: "system",
      metadata: {
        before: { maxEndpoints: null, spendCapUsdPerHour: null },
        after: { maxEndpoints: 40, spendCapUsdPerHour: 12.5 },
      },
    });
  });
});
