import { describe, expect, it } from "vitest";
import { ImageRef } from "./deployment-spec.ts";
import { IMAGE_REFERENCE } from "./source-policy.ts";

// One image-reference grammar for the API and the agent: what one accepts, the other does.

describe("image references", () => {
  it("takes what registries name", () => {
    for (const ref of [
      "vllm/vllm-openai:v0.11.0",
      "registry.example.com/team/model:tag",
      "registry.example.com:5000/a/b_c__d---e@sha256:" + "a".repeat(64),
      "ghcr.io/org/img",
      "123456789012.dkr.ecr.us-east-1.amazonaws.com/thaw:abc",
    ])
      expect(IMAGE_REFERENCE.test(ref), ref).toBe(true);
  });

  it("refuses what the review saw accepted by the API and refused by agents", () => {
    for (const ref of [
      "-k/foo",
      "--privileged/x",
      ".x.com/foo",
      "[2001:db8::1]:5000/foo",
      "registry.example.com/Upper/case",
      "reg-.example.com/x",
      "x y",
    ]) {
      expect(IMAGE_REFERENCE.test(ref), ref).toBe(false);
      const parsed = ImageRef.safeParse(ref);
      expect(parsed.success, ref).toBe(false);
      // Outside the grammar (which the OpenAPI document states as a pattern): a 400, not a rule.
      expect(parsed.error?.issues[0]?.code, ref).toBe("invalid_format");
    }
  });
});
