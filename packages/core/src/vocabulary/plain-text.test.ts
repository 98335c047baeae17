import { describe, expect, it } from "vitest";
import { CreateApiKeyInput } from "../api-keys/create-api-key.ts";
import { CreateOrgWithOwnerInput } from "../orgs/create-org-with-owner.ts";
import { plainText } from "@thaw/protocol";

// Issue 23, Low: a lone surrogate in a name answered 500 (its audit insert failed), and
// bidirectional or zero-width characters were accepted. Endpoint names were fixed first; every
// other name people give (API keys, orgs, owners, invitees) takes the same rule.

const HOSTILE = {
  "a lone surrogate": "key\uD800",
  "a bidirectional override": "evil\u202Eyek",
  "a zero-width space": "ad\u200Bmin",
  "a NUL": "a\u0000b",
  "a blank": "   ",
};

describe("names people give things", () => {
  for (const [what, name] of Object.entries(HOSTILE)) {
    it(`refuse ${what}`, () => {
      expect(plainText(100).safeParse(name).success).toBe(false);
      expect(
        CreateApiKeyInput.safeParse({ name, scopes: ["endpoints:read"] }).success,
        "API key name",
      ).toBe(false);
      const org = { orgSlug: "acme", orgName: "Acme", email: "ops@acme.com" };
      expect(CreateOrgWithOwnerInput.safeParse({ ...org, orgName: name }).success, "org").toBe(
        false,
      );
      expect(CreateOrgWithOwnerInput.safeParse({ ...org, name }).success, "owner").toBe(false);
    });
  }

  it("take what people write, trimmed", () => {
    expect(plainText(100).parse("  Grafana — prod 🚀 ")).toBe("Grafana — prod 🚀");
    expect(CreateApiKeyInput.parse({ name: " keda ", scopes: ["endpoints:scale"] }).name).toBe(
      "keda",
    );
  });
});
