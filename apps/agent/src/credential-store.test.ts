import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CredentialStore } from "./credential-store.ts";
import { JoinTokenPool } from "./join-tokens.ts";

const nodeId = "0199a000-0000-7000-8000-000000000001";

describe("CredentialStore", () => {
  it("keeps credentials across restarts in an owner-only file", () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-agent-"));
    new CredentialStore(dir).set("host-1", { nodeId, credential: "thawnode_x" });
    const reopened = new CredentialStore(dir);
    expect(reopened.get("host-1")).toEqual({ nodeId, credential: "thawnode_x" });
    expect(statSync(join(dir, "credentials.json")).mode & 0o777).toBe(0o600);
    reopened.delete("host-1");
    expect(new CredentialStore(dir).get("host-1")).toBeUndefined();
  });

  it("refuses a corrupted file instead of silently starting without credentials", () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-agent-"));
    writeFileSync(
      join(dir, "credentials.json"),
      JSON.stringify({ h: { nodeId: "not-a-uuid", credential: 1 } }),
    );
    expect(() => new CredentialStore(dir)).toThrow();
  });
});

describe("JoinTokenPool", () => {
  it("hands out each token once and removes it from the file", () => {
    const file = join(mkdtempSync(join(tmpdir(), "thaw-agent-")), "tokens");
    writeFileSync(file, "a\n\nb\n");
    const pool = new JoinTokenPool(file);
    expect(pool.remaining).toBe(2);
    expect(pool.take()).toBe("a");
    expect(readFileSync(file, "utf8")).toBe("b\n");
    expect(new JoinTokenPool(file).take()).toBe("b");
    expect(new JoinTokenPool(file).take()).toBeUndefined();
  });

  it("works without a file", () => {
    expect(new JoinTokenPool(undefined).take()).toBeUndefined();
  });
});
