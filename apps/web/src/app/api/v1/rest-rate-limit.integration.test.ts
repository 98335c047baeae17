import { createApiKey, type Actor } from "@thaw/core";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeWebTestResources, stubWebEnv } from "../../../server/testing/web-test-env.ts";

// REST v1's per-key rate limit, counted in the real Redis (THAW_REST_RATE_LIMIT_PER_MINUTE=5
// here): the sixth request in a minute is a 429 with Retry-After, another key is unaffected.

type Handler = (
  request: Request,
  context: { params: Promise<Record<string, string>> },
) => Promise<Response>;

const SLUG = "llama-3-2-1b-gguf";

describe("REST v1 rate limits", () => {
  let t: TestDatabase;
  let status: Handler;
  const keys: string[] = [];

  const get = (key: string) =>
    status(
      new Request(`http://localhost/api/v1/endpoints/${SLUG}/status`, {
        headers: { authorization: `Bearer ${key}` },
      }),
      { params: Promise.resolve({ endpoint: SLUG }) },
    );

  beforeAll(async () => {
    t = await createTestDatabase();
    const { orgId, userId } = await seedDemo(t.db);
    const owner: Actor = { type: "user", userId, orgId, role: "owner" };
    for (let i = 0; i < 2; i++)
      keys.push(
        (
          await createApiKey({
            actor: owner,
            input: { name: `k${i}`, scopes: ["endpoints:read"] },
            db: t.db,
          })
        ).secret,
      );
    stubWebEnv({
      databaseUrl: t.url,
      queuePrefix: `rate-test-${Date.now()}`,
      extra: { THAW_REST_RATE_LIMIT_PER_MINUTE: "5" },
    });
    status = (await import("./endpoints/[endpoint]/status/route.ts")).GET;
  });
  afterAll(async () => {
    await closeWebTestResources();
    await t.drop();
  });

  it("answers 429 with Retry-After once a key spent its minute, and counts each key apart", async () => {
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
    expect(await refused.json()).toEqual({
      error: {
        code: "RATE_LIMITED",
        message: `This API key made more than 5 requests in a minute; retry in ${retryAfter} s.`,
        details: { retryAfterSeconds: retryAfter, limitPerMinute: 5 },
      },
    });
    expect((await get(second)).status).toBe(200);
  });
});
