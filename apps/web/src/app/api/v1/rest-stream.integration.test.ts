import { randomUUID } from "node:crypto";
import { createApiKey, type Actor } from "@thaw/core";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeWebTestResources, stubWebEnv } from "../../../server/testing/web-test-env.ts";

// GET /api/v1/stream over the real Redis pub/sub: a key's stream carries its org's cold-start
// progress as server-sent events, and nothing of another org's.

type Handler = (
  request: Request,
  context: { params: Promise<Record<string, string>> },
) => Promise<Response>;

describe("REST v1: the live stream", () => {
  let t: TestDatabase;
  let stream: Handler;
  let publish: (orgId: string, c: { coldStartIds: string[]; closedIds: string[] }) => Promise<void>;
  let orgId: string;
  let otherOrgId: string;
  let key: string;

  beforeAll(async () => {
    t = await createTestDatabase();
    const seeded = await seedDemo(t.db);
    orgId = seeded.orgId;
    const owner: Actor = { type: "user", userId: seeded.userId, orgId, role: "owner" };
    key = (
      await createApiKey({
        actor: owner,
        input: { name: "s", scopes: ["endpoints:read"] },
        db: t.db,
      })
    ).secret;
    otherOrgId = (await t.db.org.create({ data: { slug: "other", name: "Other" } })).id;
    stubWebEnv({ databaseUrl: t.url, queuePrefix: `stream-test-${Date.now()}` });
    stream = (await import("./stream/route.ts")).GET;
    publish = (await import("../../../server/live/live-events.ts")).publishColdStartProgress;
  });
  afterAll(async () => {
    await closeWebTestResources();
    await t.drop();
  });

  it("streams the org's cold-start progress as server-sent events, and only the org's", async () => {
    const abort = new AbortController();
    const response = await stream(
      new Request("http://localhost/api/v1/stream", {
        headers: { authorization: `Bearer ${key}` },
        signal: abort.signal,
      }),
      { params: Promise.resolve({}) },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("ratelimit-limit")).toBe("600");
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const readUntil = async (needle: string) => {
      const deadline = Date.now() + 5_000;
      while (!text.includes(needle)) {
        if (Date.now() > deadline) throw new Error(`no "${needle}" in: ${text}`);
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended: ${text}`);
        text += decoder.decode(value);
      }
    };
    await readUntil(": connected");

    const foreign = randomUUID();
    const mine = randomUUID();
    await publish(otherOrgId, { coldStartIds: [foreign], closedIds: [] });
    await publish(orgId, { coldStartIds: [mine], closedIds: [mine] });
    await readUntil(mine);
    const frames = text.split("\n\n").filter((f) => f.startsWith("event:"));
    expect(frames).toHaveLength(1);
    const [eventLine, dataLine] = frames[0]!.split("\n");
    expect(eventLine).toBe("event: cold_starts");
    expect(JSON.parse(dataLine!.replace(/^data: /, ""))).toMatchObject({
      type: "cold_starts",
      coldStartIds: [mine],
      closedIds: [mine],
    });
    expect(text).not.toContain(foreign);
    abort.abort();
    await reader.cancel();
  });

  it("refuses a request without a key, like every REST route", async () => {
    const response = await stream(new Request("http://localhost/api/v1/stream"), {
      params: Promise.resolve({}),
    });
    expect(response.status).toBe(401);
  });
});
