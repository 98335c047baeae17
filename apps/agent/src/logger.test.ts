import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.ts";

describe("agent logs", () => {
  it("redact credentials, join tokens and authorization headers", () => {
    const lines: string[] = [];
    const log = createLogger("info", { write: (line: string) => lines.push(line) });
    log.info({ credential: "thawnode_secret", host: { joinToken: "thawjoin_secret" } }, "joined");
    log.warn({ request: { headers: { authorization: "Bearer thawnode_secret" } } }, "refused");
    const text = lines.join("");
    expect(text).not.toMatch(/secret/);
    expect(text).toContain("[redacted]");
    expect(JSON.parse(lines[0]!)).toMatchObject({
      name: "thaw-agent",
      msg: "joined",
      credential: "[redacted]",
    });
  });
});
