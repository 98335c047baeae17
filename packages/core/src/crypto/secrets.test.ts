import { describe, expect, it } from "vitest";
import { hashesEqual, issuePrefixedSecret, parsePrefixedSecret, sha256Hex } from "./secrets.ts";

describe("prefixed secrets", () => {
  it("issues a recognisable secret whose prefix parses back and whose hash is what is stored", () => {
    const { secret, prefix, hash } = issuePrefixedSecret("thawjoin");
    expect(secret.startsWith(`thawjoin_${prefix}_`)).toBe(true);
    expect(parsePrefixedSecret("thawjoin", secret)).toEqual({ prefix });
    expect(hash).toBe(sha256Hex(secret));
    expect(hash).not.toContain(secret);
  });

  it("rejects secrets of another kind or malformed ones", () => {
    const { secret } = issuePrefixedSecret("thawnode");
    expect(parsePrefixedSecret("thawjoin", secret)).toBeNull();
    expect(parsePrefixedSecret("thawnode", "thawnode_zz_short")).toBeNull();
    expect(parsePrefixedSecret("thawnode", `${secret}\u0000`)).toBeNull();
  });

  it("two issued secrets differ", () => {
    expect(issuePrefixedSecret("k").secret).not.toBe(issuePrefixedSecret("k").secret);
  });

  it("compares hashes in constant time and tolerates different lengths", () => {
    const h = sha256Hex("a");
    expect(hashesEqual(h, h)).toBe(true);
    expect(hashesEqual(h, sha256Hex("b"))).toBe(false);
    expect(hashesEqual(h, "ab")).toBe(false);
  });
});
