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

  it("takes the operator's snapshot store as a repository, and refuses a tag or a bare name", () => {
    const base = {
      DATABASE_URL: "postgresql://u:p@127.0.0.1:5432/thaw",
      REDIS_URL: "redis://127.0.0.1:6379",
      THAW_NODE_CREDENTIAL_SECRET: "n".repeat(32),
    };
    expect(loadEnv(base).THAW_SNAPSHOT_REGISTRY).toBeUndefined();
    expect(loadEnv({ ...base, THAW_SNAPSHOT_REGISTRY: "" }).THAW_SNAPSHOT_REGISTRY).toBeUndefined();
    const ecr = "123456789012.dkr.ecr.us-east-1.amazonaws.com/thaw-snapshots";
    expect(loadEnv({ ...base, THAW_SNAPSHOT_REGISTRY: ecr }).THAW_SNAPSHOT_REGISTRY).toBe(ecr);
    expect(() => loadEnv({ ...base, THAW_SNAPSHOT_REGISTRY: `${ecr}:latest` })).toThrow(
      /THAW_SNAPSHOT_REGISTRY: names a tag or digest/,
    );
    expect(() => loadEnv({ ...base, THAW_SNAPSHOT_REGISTRY: "thaw-snapshots" })).toThrow(
      /THAW_SNAPSHOT_REGISTRY: must start with the registry's host/,
    );
  });
});
