import { describe, expect, it } from "vitest";
import { parseWebEnv } from "./env.ts";

const valid = {
  DATABASE_URL: "postgresql://u:p@localhost:5432/thaw",
  BETTER_AUTH_SECRET: "x".repeat(32),
  THAW_AGENT_CALL_PUBLIC_KEY: "MCowBQYDK2VwAyEAnXcAANsPB7C8cJmzrTEiFiW5aPEgySmtDHtbmwfmUfY=",
};

describe("web environment", () => {
  it("accepts a complete environment and fills defaults", () => {
    const env = parseWebEnv({ ...valid, REDIS_URL: "" });
    expect(env).toMatchObject({ BETTER_AUTH_URL: "http://localhost:3000", LOG_LEVEL: "info" });
    expect(env.REDIS_URL).toBeUndefined();
  });

  it.each([
    ["DATABASE_URL", { ...valid, DATABASE_URL: undefined }, /DATABASE_URL is not set/],
    [
      "DATABASE_URL",
      { ...valid, DATABASE_URL: "mysql://x" },
      /DATABASE_URL must be a postgresql:\/\/ URL/,
    ],
    [
      "BETTER_AUTH_SECRET",
      { ...valid, BETTER_AUTH_SECRET: "short" },
      /BETTER_AUTH_SECRET must be at least 32 characters/,
    ],
    [
      "BETTER_AUTH_URL",
      { ...valid, BETTER_AUTH_URL: "localhost" },
      /BETTER_AUTH_URL must be an absolute URL/,
    ],
    ["REDIS_URL", { ...valid, REDIS_URL: "http://x" }, /REDIS_URL must be a redis:\/\/ URL/],
    [
      "THAW_AGENT_CALL_PUBLIC_KEY",
      { ...valid, THAW_AGENT_CALL_PUBLIC_KEY: undefined },
      /THAW_AGENT_CALL_PUBLIC_KEY is required: the public half of the scheduler's THAW_AGENT_CALL_KEY/,
    ],
    [
      "THAW_AGENT_CALL_PUBLIC_KEY",
      // A private key where the public one belongs is refused, not served to every agent.
      {
        ...valid,
        THAW_AGENT_CALL_PUBLIC_KEY:
          "MC4CAQAwBQYDK2VwBCIEIGn3dyRZ0pNOhLpNU3QnzDP0wFGkqJvQ1XH0BCJR4E9e",
      },
      /THAW_AGENT_CALL_PUBLIC_KEY must be an Ed25519 public key/,
    ],
    [
      "BETTER_AUTH_URL",
      { ...valid, NODE_ENV: "production", BETTER_AUTH_URL: "http://thaw.example.com" },
      /BETTER_AUTH_URL is http:\/\/ on a public name: serve the dashboard over https/,
    ],
  ])("names %s when it is missing or malformed", (_name, source, message) => {
    expect(() => parseWebEnv(source)).toThrow(message);
  });

  it("runs production over http on loopback, or when told the network is closed", () => {
    const prod = { ...valid, NODE_ENV: "production" };
    expect(parseWebEnv({ ...prod, BETTER_AUTH_URL: "http://127.0.0.1:3000" }).NODE_ENV).toBe(
      "production",
    );
    expect(
      parseWebEnv({
        ...prod,
        BETTER_AUTH_URL: "http://thaw.internal.example",
        THAW_ALLOW_INSECURE_HTTP: "true",
      }).THAW_ALLOW_INSECURE_HTTP,
    ).toBe(true);
    expect(parseWebEnv({ ...prod, BETTER_AUTH_URL: "https://thaw.example.com" })).toBeDefined();
  });
});
