import { describe, expect, it } from "vitest";
import { databaseUrlEnv, logLevelEnv, presentEnv, queuePrefixEnv, redisUrlEnv } from "./index.ts";

describe("shared environment fields", () => {
  it("drops exported-but-empty variables, keeps the rest as they are", () => {
    expect(presentEnv({ A: "", B: undefined, C: "x", D: " " })).toEqual({ C: "x", D: " " });
  });

  it("takes postgres and redis URLs only, naming what is expected", () => {
    expect(databaseUrlEnv.parse("postgres://u@h/db")).toBe("postgres://u@h/db");
    expect(databaseUrlEnv.safeParse("mysql://h/db").error?.issues[0]?.message).toBe(
      "must be a postgresql:// URL",
    );
    expect(databaseUrlEnv.safeParse(undefined).error?.issues[0]?.message).toMatch(/^is not set/);
    expect(redisUrlEnv.parse("rediss://h:6380")).toBe("rediss://h:6380");
    expect(redisUrlEnv.safeParse("http://h").error?.issues[0]?.message).toBe(
      "must be a redis:// URL",
    );
  });

  it("defaults the queue prefix and the log level, and takes silent", () => {
    expect(queuePrefixEnv.parse(undefined)).toBe("thaw");
    expect(queuePrefixEnv.safeParse("x".repeat(65)).success).toBe(false);
    expect(logLevelEnv.parse(undefined)).toBe("info");
    expect(logLevelEnv.parse("silent")).toBe("silent");
    expect(logLevelEnv.safeParse("verbose").success).toBe(false);
  });
});
