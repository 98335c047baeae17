import { describe, expect, it } from "vitest";
import { CreateWebhookInput } from "./webhook-spec.ts";

describe("CreateWebhookInput.url", () => {
  const parse = (url: string) =>
    CreateWebhookInput.safeParse({ url, eventTypes: ["alert.firing"] });

  it("takes a URI of printable ASCII, and defaults the format to standard", () => {
    const ok = parse("https://hooks.example.com/T0/B0?x=%F0%9F%94%A5");
    expect(ok.success && ok.data.format).toBe("standard");
  });

  // The OpenAPI document says format: uri; the WHATWG parser alone would accept these by
  // percent-encoding them (the fuzzer found one: a 201 for a body the document refuses).
  it.each([
    ["non-ASCII", "https://hooks.example.com/\u{F8434}"],
    ["a space", "https://hooks.example.com/a b"],
    ["a control character", "https://hooks.example.com/\u0007"],
  ])("refuses %s by rule", (_what, url) => {
    const result = parse(url);
    expect(result.success).toBe(false);
    expect(result.error?.issues.every((i) => i.code === "custom")).toBe(true);
  });
});
