import { describe, expect, it } from "vitest";
import { deriveNodeCredential } from "./node-credential.ts";
import { parsePrefixedSecret } from "./secrets.ts";

const SECRET = "s".repeat(32);
const NODE = "01936b2e-5f43-7a1c-9d2e-4b5a6c7d8e9f";

describe("deriveNodeCredential", () => {
  it("is a well-formed prefixed secret, the same every time for one node and secret", () => {
    const credential = deriveNodeCredential("thawnode", SECRET, NODE);
    expect(parsePrefixedSecret("thawnode", credential)).not.toBeNull();
    expect(deriveNodeCredential("thawnode", SECRET, NODE)).toBe(credential);
  });

  it("differs per node and per secret, and does not contain either", () => {
    const credential = deriveNodeCredential("thawnode", SECRET, NODE);
    expect(deriveNodeCredential("thawnode", SECRET, NODE.replace(/f$/, "e"))).not.toBe(credential);
    expect(deriveNodeCredential("thawnode", "t".repeat(32), NODE)).not.toBe(credential);
    expect(credential).not.toContain(SECRET);
    expect(credential).not.toContain(NODE);
  });
});
