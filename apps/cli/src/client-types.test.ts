import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { clientTypes, currentDocument, GENERATED_TYPES } from "./client-types.ts";

describe("the CLI's generated client types", () => {
  it("match the API's current OpenAPI document (run `pnpm --filter @thaw/cli generate`)", async () => {
    const fresh = await clientTypes(currentDocument());
    expect(readFileSync(GENERATED_TYPES, "utf8")).toBe(fresh);
  }, 60_000);
});
