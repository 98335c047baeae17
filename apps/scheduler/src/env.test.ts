import { describe, expect, it } from "vitest";
import { loadEnv } from "./env.ts";

describe("scheduler env", () => {
  it("names every missing or malformed variable and says what to do", () => {
    expect(() => loadEnv({ REDIS_URL: "http://nope" })).toThrow(
      /DATABASE_URL: is not set[\s\S]*REDIS_URL: must be a redis:\/\/ URL[\s\S]*THAW_NODE_CREDENTIAL_SECRET: is not set[\s\S]*services\.sh/,
    );
  });

  it("accepts a valid environment with defaults", () => {
    const env = loadEnv({
      DATABASE_URL: "postgresql://u:p@127.0.0.1:5432/thaw",
      REDIS_URL: "redis://127.0.0.1:6379",
      THAW_NODE_CREDENTIAL_SECRET: "n".repeat(32),
    });
    expect(env.THAW_QUEUE_PREFIX).toBe("thaw");
    expect(env.LOG_LEVEL).toBe("info");
  });
});
