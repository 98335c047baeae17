import { describe, expect, it } from "vitest";
import { effectiveWaitPrice } from "./wait-price";

describe("effectiveWaitPrice", () => {
  it("takes the endpoint's own price over its org's", () => {
    expect(effectiveWaitPrice(12, 3)).toEqual({ value: 12, source: "endpoint" });
  });

  it("keeps an endpoint's 0 (never keep warm) rather than falling back", () => {
    expect(effectiveWaitPrice(0, 3)).toEqual({ value: 0, source: "endpoint" });
  });

  it("falls back to the org's default, 0 included", () => {
    expect(effectiveWaitPrice(null, 7.5)).toEqual({ value: 7.5, source: "org" });
    expect(effectiveWaitPrice(null, 0)).toEqual({ value: 0, source: "org" });
  });

  it("has no price when neither sets one: the platform's default is an idle budget", () => {
    expect(effectiveWaitPrice(null, null)).toEqual({ value: null, source: "platform" });
  });
});
