import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../web-server.ts";
import { newApiKey, restClient } from "./rest-client.ts";

// REST v1's rate limits through the built server, counted in the real Redis: per key
// (THAW_REST_RATE_LIMIT_PER_MINUTE=5 here) the sixth request in a minute is a 429 with
// Retry-After, another key is unaffected; per org over all its keys
// (THAW_REST_RATE_LIMIT_PER_ORG_PER_MINUTE=7), many keys do not multiply the org's share,
// and another org is unaffected.

const SLUG = "llama-3-2-1b-gguf";

describe("REST v1 rate limits", () => {
  let server: WebServer;
  const keys: string[] = [];

  beforeAll(async () => {
    server = await startWebServer({
      env: { THAW_REST_RATE_LIMIT_PER_MINUTE: "5", THAW_REST_RATE_LIMIT_PER_ORG_PER_MINUTE: "7" },
    });
    for (let i = 0; i < 3; i++)
      keys.push(
        await newApiKey(server.database.db, server.orgId, ["endpoints:read"], { name: `k${i}` }),
      );
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("answers 429 with Retry-After once a key spent its minute, and counts each key apart", async () => {
    const call = restClient(server.baseUrl);
    const get = (key: string) => call("GET", `/api/v1/endpoints/${SLUG}/status`, { key });
    const [first, second] = keys as [string, string];
    for (let i = 0; i < 5; i++) {
      const ok = await get(first);
      expect(ok.status).toBe(200);
      expect(ok.headers.get("ratelimit-limit")).toBe("5");
      expect(ok.headers.get("ratelimit-remaining")).toBe(String(4 - i));
    }
    const refused = await get(first);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.json).toEqual({
      error: {
        code: "RATE_LIMITED",
        message: `This API key made more than 5 requests in a minute; retry in ${retryAfter} s.`,
        details: { retryAfterSeconds: retryAfter, limitPerMinute: 5 },
      },
    });
    expect((await get(second)).status).toBe(200);
  });

  it("answers 429 once the org's keys together spent the org's minute; another org is unaffected", async () => {
    const call = restClient(server.baseUrl);
    const get = (key: string) => call("GET", `/api/v1/endpoints/${SLUG}/status`, { key });
    // The first test spent 5 of the org's 7 with its first key and 1 with its second.
    const seventh = await get(keys[2]!);
    expect(seventh.status).toBe(200);
    // The org's budget is closer to empty than the key's: the headers say so.
    expect(seventh.headers.get("ratelimit-limit")).toBe("7");
    expect(seventh.headers.get("ratelimit-remaining")).toBe("0");
    const refused = await get(keys[2]!);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((refused.json as { error: { message: string } }).error.message).toMatch(
      /^This org's API keys together made more than 7 requests in a minute; retry in \d+ s\.$/,
    );
    const db = server.database.db;
    const other = await db.org.create({ data: { slug: "rate-other", name: "Other" } });
    const otherKey = await newApiKey(db, other.id, ["endpoints:read"], { name: "other" });
    expect((await call("GET", "/api/v1/endpoints", { key: otherKey })).status).toBe(200);
  });
});
