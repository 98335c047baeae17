import { describe, expect, it } from "vitest";
import { escapeSlackText, slackMessage } from "./slack-message.ts";

describe("slackMessage", () => {
  it("writes a firing alert as a header, its summary and its facts", () => {
    const message = slackMessage({
      type: "alert.firing",
      timestamp: "2026-11-27T03:00:00.000Z",
      data: {
        endpointSlug: "llama-8b",
        severity: "page",
        summary: "load_weights is disk-read bound at 125 MiB/s — provision gp3 throughput",
        rule: { name: "slow starts", kind: "slow_cold_start" },
        openedAt: "2026-11-27T03:00:00.000Z",
      },
    });
    expect(message.text).toBe(
      "🔥 Firing: slow starts on llama-8b — load_weights is disk-read bound at 125 MiB/s — provision gp3 throughput",
    );
    expect(message.blocks[0]).toEqual({
      type: "header",
      text: { type: "plain_text", text: "🔥 Firing: slow starts on llama-8b" },
    });
    expect(JSON.stringify(message.blocks)).toContain("*Severity*\\npage");
  });

  it("escapes what a slug or an error could use to forge a link or a mention", () => {
    const message = slackMessage({
      type: "cold_start.failed",
      data: { endpointSlug: "x", error: "<!channel> see <https://evil.example|here> & more" },
    });
    expect(message.text).not.toContain("<!channel>");
    expect(message.text).toContain("&lt;!channel&gt;");
    expect(escapeSlackText("a&b")).toBe("a&amp;b");
  });

  it("clips a header to Slack's 150 characters and keeps at most ten fields", () => {
    const data = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i]));
    const message = slackMessage({
      type: "endpoint.scaled",
      data: { ...data, endpointSlug: "e".repeat(300) },
    });
    const header = message.blocks[0] as { text: { text: string } };
    expect(header.text.text.length).toBe(150);
    const fields = message.blocks.find((b) => "fields" in b) as { fields: unknown[] };
    expect(fields.fields).toHaveLength(10);
  });
});
