import { spawn } from "node:child_process";
import { useTestDatabase } from "@thaw/db/testing";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { loadEnv } from "./env.ts";
import { startScheduler } from "./scheduler.ts";
import { TEST_AGENT_CALL_KEYS } from "./testing/agent-call-keys.ts";

const silent = pino({ level: "silent" });

describe("scheduler process", () => {
  const testDb = useTestDatabase();

  it("reports its health (Redis round trip, queue depths) to Postgres and withdraws it on stop", async () => {
    const env = loadEnv({
      DATABASE_URL: testDb.current.url,
      REDIS_URL: process.env.REDIS_URL,
      THAW_QUEUE_PREFIX: `test-${Date.now()}`,
      THAW_AGENT_CALL_KEY: TEST_AGENT_CALL_KEYS.privateKey,
    });
    const scheduler = await startScheduler(env, silent);
    try {
      await expect
        .poll(
          () =>
            testDb.current.db.serviceHeartbeat.findUnique({ where: { id: scheduler.instanceId } }),
          {
            timeout: 10_000,
          },
        )
        .toMatchObject({
          service: "scheduler",
          details: { redisOk: true, queueDepths: { reconcile: 0, place: 0 } },
        });
    } finally {
      await scheduler.stop();
    }
    expect(
      await testDb.current.db.serviceHeartbeat.count({ where: { id: scheduler.instanceId } }),
    ).toBe(0);
  });

  it("refuses to start on a Redis whose eviction policy could drop jobs", async () => {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const redis = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--maxmemory-policy",
        "allkeys-lru",
      ],
      { stdio: "ignore" },
    );
    try {
      await new Promise((r) => setTimeout(r, 300));
      const env = loadEnv({
        DATABASE_URL: testDb.current.url,
        REDIS_URL: `redis://127.0.0.1:${port}`,
        THAW_AGENT_CALL_KEY: TEST_AGENT_CALL_KEYS.privateKey,
      });
      await expect(startScheduler(env, silent)).rejects.toThrow(
        /maxmemory-policy is 'allkeys-lru'.*noeviction/,
      );
    } finally {
      redis.kill();
    }
  });
});
