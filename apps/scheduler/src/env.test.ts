import { generateAgentCallKeyPair } from "@thaw/node-agent-client";
import { describe, expect, it } from "vitest";
import { loadEnv } from "./env.ts";

const CALL_KEY = generateAgentCallKeyPair().privateKey;

describe("scheduler env", () => {
  it("names every missing or malformed variable and says what to do", () => {
    expect(() => loadEnv({ REDIS_URL: "http://nope" })).toThrow(
      /DATABASE_URL: is not set[\s\S]*REDIS_URL: must be a redis:\/\/ URL[\s\S]*THAW_AGENT_CALL_KEY: is not set: the scheduler's Ed25519 key[\s\S]*services\.sh/,
    );
  });

  it("accepts a valid environment with defaults", () => {
    const env = loadEnv({
      DATABASE_URL: "postgresql://u:p@127.0.0.1:5432/thaw",
      REDIS_URL: "redis://127.0.0.1:6379",
      THAW_AGENT_CALL_KEY: CALL_KEY,
    });
    expect(env.THAW_QUEUE_PREFIX).toBe("thaw");
    expect(env.LOG_LEVEL).toBe("info");
    expect(env.THAW_AGENT_CALL_KEY.asymmetricKeyType).toBe("ed25519");
  });

  it("refuses an agent call key that is not an Ed25519 private key, saying how to make one", () => {
    const base = {
      DATABASE_URL: "postgresql://u:p@127.0.0.1:5432/thaw",
      REDIS_URL: "redis://127.0.0.1:6379",
    };
    for (const bad of ["n".repeat(32), generateAgentCallKeyPair().publicKey])
      expect(() => loadEnv({ ...base, THAW_AGENT_CALL_KEY: bad })).toThrow(
        /THAW_AGENT_CALL_KEY: must be an Ed25519 private key[\s\S]*openssl genpkey/,
      );
  });

  it("takes the operator's snapshot store as a repository, and refuses a tag or a bare name", () => {
    const base = {
      DATABASE_URL: "postgresql://u:p@127.0.0.1:5432/thaw",
      REDIS_URL: "redis://127.0.0.1:6379",
      THAW_AGENT_CALL_KEY: CALL_KEY,
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

  it("reads LOG_LEVEL and the shared fields as the web app does: silent allowed, empty unset", () => {
    const base = {
      DATABASE_URL: "postgresql://u:p@127.0.0.1:5432/thaw",
      REDIS_URL: "redis://127.0.0.1:6379",
      THAW_AGENT_CALL_KEY: CALL_KEY,
    };
    expect(loadEnv({ ...base, LOG_LEVEL: "silent" }).LOG_LEVEL).toBe("silent");
    const blank = loadEnv({ ...base, LOG_LEVEL: "", THAW_QUEUE_PREFIX: "", THAW_FLEET_CONFIG: "" });
    expect(blank).toMatchObject({ LOG_LEVEL: "info", THAW_QUEUE_PREFIX: "thaw" });
    expect(blank.THAW_FLEET_CONFIG).toBeUndefined();
    expect(() => loadEnv({ ...base, DATABASE_URL: "" })).toThrow(/DATABASE_URL: is not set/);
  });
});
