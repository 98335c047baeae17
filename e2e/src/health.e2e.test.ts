import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "./web-server.ts";

// GET /api/health through the built server: ready while PostgreSQL and Redis answer; a 503
// naming which part is down (and nothing of its error text) when the database is gone.

describe("GET /api/health", () => {
  let up: WebServer;
  let down: WebServer;

  beforeAll(async () => {
    up = await startWebServer();
    // A server whose database does not exist: the pool cannot connect, as after an outage.
    const missing = new URL(process.env.DATABASE_URL!);
    missing.pathname = `/thaw_missing_${Date.now()}`;
    down = await startWebServer({ env: { DATABASE_URL: missing.toString() } });
  });
  afterAll(async () => {
    await up?.stop();
    await down?.stop();
  });

  it("is ready when PostgreSQL and Redis answer", async () => {
    const response = await fetch(`${up.baseUrl}/api/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok", database: "ok", redis: "ok" });
  });

  it("says 503 and which part is down when PostgreSQL is gone", async () => {
    const response = await fetch(`${down.baseUrl}/api/health`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as { status: string; database: string; redis: string };
    expect(body).toMatchObject({ status: "degraded", redis: "ok" });
    // An anonymous client learns which part is down, not the database's host or error text.
    expect(body.database).toBe("unavailable");
    expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|\d{4,5}|postgres|thaw_missing/i);
  });
});
