import { describe, expect, it } from "vitest";
import { createWebLogger } from "./logger.ts";

// Issue 23, Low: the web logger had no redaction test, and join tokens and node credentials,
// logged under their own names, were not covered.

describe("web logs", () => {
  it("redact every credential the web tier handles, top level and one down", () => {
    const lines: string[] = [];
    const log = createWebLogger("info", { write: (line: string) => lines.push(line) });
    log.info(
      {
        joinToken: "thawjoin_secret1",
        nodeCredential: "thawnode_secret2",
        input: { password: "secret3", staleCredential: "thawnode_secret4" },
        headers: { authorization: "Bearer thaw_secret5", cookie: "session=secret6" },
      },
      "agent joined",
    );
    log.warn({ request: { headers: { authorization: "Bearer thaw_secret7" } } }, "refused");
    log.info({ apiKey: "thaw_secret8", org: { secret: "secret9" } }, "created");
    const text = lines.join("");
    expect(text).not.toMatch(/secret\d/);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      name: "thaw-web",
      msg: "agent joined",
      joinToken: "[redacted]",
      nodeCredential: "[redacted]",
      input: { password: "[redacted]", staleCredential: "[redacted]" },
    });
  });
});
