import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  configPath,
  DEFAULT_URL,
  readStoredConfig,
  resolveTarget,
  writeStoredConfig,
} from "./config.ts";

describe("CLI config", () => {
  it("lives under XDG_CONFIG_HOME, else ~/.config", () => {
    expect(configPath({ XDG_CONFIG_HOME: "/x", HOME: "/h" })).toBe("/x/thaw/config.json");
    expect(configPath({ HOME: "/h" })).toBe("/h/.config/thaw/config.json");
  });

  it("is written for its owner's eyes only, and read back", () => {
    const path = join(mkdtempSync(join(tmpdir(), "thaw-cli-")), "thaw", "config.json");
    writeStoredConfig(path, { url: "http://a.test", key: "thaw_k" });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readStoredConfig(path)).toEqual({ url: "http://a.test", key: "thaw_k" });
    expect(readStoredConfig(`${path}.missing`)).toBeUndefined();
  });

  it("takes flags over the environment over the stored config over the default", () => {
    const stored = { url: "http://stored.test", key: "stored" };
    expect(resolveTarget({}, {}, undefined)).toEqual({ url: DEFAULT_URL, key: undefined });
    expect(resolveTarget({}, {}, stored)).toEqual({ url: "http://stored.test", key: "stored" });
    expect(
      resolveTarget({}, { THAW_URL: "http://env.test/", THAW_API_KEY: "env" }, stored),
    ).toEqual({ url: "http://env.test", key: "env" });
    expect(
      resolveTarget({ url: "http://flag.test" }, { THAW_URL: "http://env.test" }, stored).url,
    ).toBe("http://flag.test");
  });
});
