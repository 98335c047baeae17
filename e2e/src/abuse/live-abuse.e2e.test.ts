import { DEMO_USER } from "@thaw/db/seed";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../web-server.ts";
import { newApiKey } from "../rest/rest-client.ts";

// Live streams as a hostile client would use them (issue 23, finding 5), against the built
// server: each stream used to open its own Redis connection with no cap, and kept delivering
// after its key was revoked, after sign-out and after the user's membership was deleted.

const PER_PRINCIPAL = 3;

describe("live stream abuse", () => {
  let server: WebServer;
  let redis: Redis;

  beforeAll(async () => {
    server = await startWebServer({
      env: {
        THAW_LIVE_STREAMS_PER_PRINCIPAL: String(PER_PRINCIPAL),
        THAW_LIVE_RECHECK_SECONDS: "1",
      },
    });
    redis = new Redis(process.env.REDIS_URL!);
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  const open = (key: string) => {
    const abort = new AbortController();
    const response = fetch(`${server.baseUrl}/api/v1/stream`, {
      headers: { authorization: `Bearer ${key}` },
      signal: abort.signal,
    });
    return { response, abort };
  };
  const redisClients = async () =>
    ((await redis.call("CLIENT", "LIST")) as string).trim().split("\n").length;

  it("refuses streams past the key's cap, on one shared Redis subscriber", async () => {
    const key = await newApiKey(server.database.db, server.orgId, ["endpoints:read"]);
    // Warm the server's own connections (the first stream opens its subscriber).
    const first = open(key);
    expect((await first.response).status).toBe(200);
    const baseline = await redisClients();
    const more = Array.from({ length: PER_PRINCIPAL - 1 }, () => open(key));
    for (const s of more) expect((await s.response).status).toBe(200);
    const refused = await open(key).response;
    expect(refused.status).toBe(429);
    const refusal = (await refused.json()) as { error: { code: string; message: string } };
    expect(refusal.error.code).toBe("RATE_LIMITED");
    expect(refusal.error.message).toMatch(/open live streams/);
    expect(await redisClients()).toBe(baseline);
    for (const s of [first, ...more]) s.abort.abort();
    // Closed streams give their slots back.
    await expect
      .poll(
        async () => {
          const again = open(key);
          const status = (await again.response).status;
          again.abort.abort();
          return status;
        },
        { timeout: 5_000 },
      )
      .toBe(200);
  });

  it("closes a revoked key's stream", async () => {
    const key = await newApiKey(server.database.db, server.orgId, ["endpoints:read"], {
      name: "to-revoke",
    });
    const stream = open(key);
    const response = await stream.response;
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    await server.database.db.apiKey.updateMany({
      where: { name: "to-revoke" },
      data: { revokedAt: new Date() },
    });
    const ended = await Promise.race([
      (async () => {
        for (;;) if ((await reader.read()).done) return true;
      })(),
      new Promise<false>((r) => setTimeout(() => r(false), 5_000)),
    ]);
    expect(ended, "the stream ended within 5 s of the revocation").toBe(true);
  });

  /** Signs the demo owner in: the session cookie. */
  const signIn = async () => {
    const response = await fetch(`${server.baseUrl}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.baseUrl },
      body: JSON.stringify({ email: DEMO_USER.email, password: DEMO_USER.password }),
    });
    expect(response.status).toBe(200);
    return response.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
  };
  /** The dashboard's stream with `cookie`: its reader, once the first bytes arrived. */
  const openLive = async (cookie: string) => {
    const response = await fetch(`${server.baseUrl}/api/live`, { headers: { cookie } });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    return reader;
  };
  const endsWithin = (reader: ReadableStreamDefaultReader<Uint8Array>, ms: number) =>
    Promise.race([
      (async () => {
        for (;;) if ((await reader.read()).done) return true;
      })(),
      new Promise<false>((r) => setTimeout(() => r(false), ms)),
    ]);

  it("closes a session's stream when the user signs out, and audits the sign-out", async () => {
    const cookie = await signIn();
    const reader = await openLive(cookie);
    const out = await fetch(`${server.baseUrl}/api/auth/sign-out`, {
      method: "POST",
      headers: { cookie, origin: server.baseUrl, "content-type": "application/json" },
      body: "{}",
    });
    expect(out.status).toBe(200);
    expect(await endsWithin(reader, 5_000), "the stream ended within 5 s of sign-out").toBe(true);
    // The org's audit log says who signed out and from where, and holds nothing secret.
    const signedOut = await server.database.db.auditLog.findMany({
      where: { orgId: server.orgId, action: "auth.signed_out" },
    });
    expect(signedOut).toHaveLength(1);
    expect(signedOut[0]).toMatchObject({
      actorType: "user",
      actorId: server.userId,
      targetType: "user",
      targetId: server.userId,
      metadata: { address: "127.0.0.1" },
    });
    expect(Object.keys(signedOut[0]!.metadata as object)).toEqual(["address"]);
    const recorded = JSON.stringify(signedOut[0]);
    expect(recorded).not.toContain(DEMO_USER.password);
    for (const value of cookie.split("; ").map((pair) => pair.slice(pair.indexOf("=") + 1)))
      if (value) expect(recorded).not.toContain(value);
  });

  it("closes a member's stream once the membership is gone", async () => {
    const cookie = await signIn();
    const reader = await openLive(cookie);
    const db = server.database.db;
    const user = await db.user.findUniqueOrThrow({ where: { email: DEMO_USER.email } });
    // What removing the member does to the row (core's removeMember refuses the last owner).
    await db.membership.deleteMany({ where: { userId: user.id, orgId: server.orgId } });
    expect(await endsWithin(reader, 5_000), "the stream ended within 5 s of removal").toBe(true);
    // And no new one opens.
    const again = await fetch(`${server.baseUrl}/api/live`, { headers: { cookie } });
    expect(again.status).toBeGreaterThanOrEqual(400);
    expect(again.status).toBeLessThan(500);
  });
});
