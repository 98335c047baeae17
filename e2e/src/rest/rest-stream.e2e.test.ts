import { randomUUID } from "node:crypto";
import { LIVE_CHANNELS } from "@thaw/core";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../web-server.ts";
import { newApiKey } from "./rest-client.ts";

// GET /api/v1/stream through the built server and the real Redis pub/sub: a key's stream
// carries its org's cold-start progress as server-sent events, and nothing of another org's.
// (This route answered 500 in production while an in-process test of it passed.)

describe("REST v1: the live stream", () => {
  let server: WebServer;
  let redis: Redis;
  let otherOrgId: string;
  let key: string;

  /** What telemetry ingest publishes when cold starts move (the channel is the contract). */
  const publish = (orgId: string, change: { coldStartIds: string[]; closedIds: string[] }) =>
    redis.publish(
      `${server.sharedEnv.THAW_QUEUE_PREFIX}:${LIVE_CHANNELS.org(orgId)}`,
      JSON.stringify({ type: "cold_starts", ...change, at: new Date().toISOString() }),
    );

  beforeAll(async () => {
    server = await startWebServer();
    redis = new Redis(process.env.REDIS_URL!);
    key = await newApiKey(server.database.db, server.orgId, ["endpoints:read"]);
    otherOrgId = (await server.database.db.org.create({ data: { slug: "other", name: "Other" } }))
      .id;
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it("streams the org's cold-start progress as server-sent events, and only the org's", async () => {
    const abort = new AbortController();
    const response = await fetch(`${server.baseUrl}/api/v1/stream`, {
      headers: { authorization: `Bearer ${key}` },
      signal: abort.signal,
    });
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
    await publish(server.orgId, { coldStartIds: [mine], closedIds: [mine] });
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
    await reader.cancel().catch(() => undefined);
  });

  it("refuses a request without a key, like every REST route", async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/stream`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: "UNAUTHENTICATED" } });
  });
});
