import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeWebTestResources, stubWebEnv } from "../../../server/testing/web-test-env.ts";

describe("GET /api/health", () => {
  let t: TestDatabase;
  let health: () => Promise<Response>;

  beforeAll(async () => {
    t = await createTestDatabase();
    stubWebEnv({ databaseUrl: t.url, queuePrefix: `health-${Date.now()}` });
    health = (await import("./route.ts")).GET;
  });
  afterAll(async () => {
    await closeWebTestResources();
    await t.drop();
  });

  it("is ready when PostgreSQL and Redis answer", async () => {
    const response = await health();
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok", database: "ok", redis: "ok" });
  });

  it("says 503 and which part is down when PostgreSQL is gone", async () => {
    const { closeDb } = await import("../../../server/db.ts");
    await closeDb();
    await t.drop();
    const response = await health();
    expect(response.status).toBe(503);
    const body = (await response.json()) as { status: string; database: string; redis: string };
    expect(body).toMatchObject({ status: "degraded", redis: "ok" });
    expect(body.database).not.toBe("ok");
    // An anonymous client learns which part is down, not the database's host or error text.
    expect(body.database).toBe("unavailable");
    expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|\d{4,5}|postgres|thaw_test/i);
    t = await createTestDatabase(); // for afterAll's drop
  });
});
