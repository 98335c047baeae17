import {
  EndpointPredictionsResponse,
  EndpointStatusResponse,
  ErrorResponse,
  LoadSignalResponse,
  SetDesiredReplicasResponse,
  TIME_TO_READY_WINDOW,
  type TimeToReadySummary,
} from "@thaw/core";
import { testNodeRow } from "@thaw/core/testing";
import { DEMO_USER } from "@thaw/db/seed";
import { Queue } from "bullmq";
import superjson from "superjson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../web-server.ts";
import { newApiKey, restClient } from "./rest-client.ts";

// REST v1 through the built server over HTTP, on a real database: API keys, scopes, org
// isolation, idempotency and bad input on /replicas, /status, /predictions and /signals.

const SLUG = "llama-3-2-1b-gguf"; // min 0, max 4

describe("REST v1: endpoints/{endpoint}/replicas and /status", () => {
  let server: WebServer;
  const keys: Record<string, string> = {};
  type Init = { key?: string | null; body?: string; headers?: Record<string, string> };
  let api: (
    method: string,
    suffix: string,
    endpoint: string,
    init?: Init,
  ) => ReturnType<ReturnType<typeof restClient>>;
  const put = "replicas";
  const get = "status";
  const predictions = "predictions";
  const signals = "signals";
  let orgId: string;

  const desired = async () =>
    (await server.database.db.endpoint.findFirstOrThrow({ where: { slug: SLUG, orgId } }))
      .desiredReplicas;

  beforeAll(async () => {
    server = await startWebServer({ env: { THAW_REST_RATE_LIMIT_PER_MINUTE: "100000" } });
    orgId = server.orgId;
    const db = server.database.db;
    keys.scale = await newApiKey(db, orgId, ["endpoints:read", "endpoints:scale"]);
    keys.read = await newApiKey(db, orgId, ["endpoints:read"]);
    keys.revoked = await newApiKey(db, orgId, ["endpoints:read", "endpoints:scale"]);
    const revokedRow = await db.apiKey.findFirstOrThrow({ orderBy: { createdAt: "desc" } });
    await db.apiKey.update({ where: { id: revokedRow.id }, data: { revokedAt: new Date() } });
    keys.expired = await newApiKey(db, orgId, ["endpoints:read"], { expiresInDays: 1 });
    const expiredRow = await db.apiKey.findFirstOrThrow({ orderBy: { createdAt: "desc" } });
    await db.apiKey.update({
      where: { id: expiredRow.id },
      data: { expiresAt: new Date(Date.now() - 1_000) },
    });
    const other = await db.org.create({ data: { slug: "other", name: "Other" } });
    keys.otherOrg = await newApiKey(db, other.id, ["endpoints:read", "endpoints:scale"]);
    const call = restClient(server.baseUrl);
    api = (method, suffix, endpoint, init = {}) =>
      call(method, `/api/v1/endpoints/${encodeURIComponent(endpoint)}/${suffix}`, {
        key: init.key === undefined ? keys.scale : init.key,
        ...(init.body !== undefined ? { body: init.body } : {}),
        headers: { "content-type": "application/json", ...init.headers },
      });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("refuses a missing, malformed, unknown, revoked or expired key with 401", async () => {
    for (const key of [
      null,
      "nope",
      "thaw_000000000000_notarealkeynotarealkeynotreal",
      keys.revoked,
      keys.expired,
    ]) {
      const response = await api("GET", get, SLUG, { key });
      expect(response.status, String(key)).toBe(401);
      expect(response.json).toMatchObject({ error: { code: "UNAUTHENTICATED" } });
    }
  });

  it("refuses a key without the scope with 403, and another org's endpoint is a 404", async () => {
    const forbidden = await api("PUT", put, SLUG, { key: keys.read, body: '{"replicas":1}' });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json).toMatchObject({
      error: { code: "FORBIDDEN", details: { permission: "endpoints:scale" } },
    });
    expect((await api("GET", get, SLUG, { key: keys.otherOrg })).status).toBe(404);
    expect(
      (await api("PUT", put, SLUG, { key: keys.otherOrg, body: '{"replicas":1}' })).status,
    ).toBe(404);
    expect(await desired()).toBe(0);
  });

  it("scales, records the change, enqueues reconcile, and honours Idempotency-Key", async () => {
    const headers = { "idempotency-key": "scale-1" };
    const first = await api("PUT", put, SLUG, { body: '{"replicas":2}', headers });
    expect(first.status).toBe(200);
    const body = SetDesiredReplicasResponse.parse(first.json);
    expect(body).toMatchObject({ slug: SLUG, previousReplicas: 0, desiredReplicas: 2 });
    const again = await api("PUT", put, SLUG, { body: '{"replicas":2}', headers });
    expect(again.json).toEqual(body);
    const clash = await api("PUT", put, SLUG, { body: '{"replicas":3}', headers });
    expect(clash.status).toBe(409);
    ErrorResponse.parse(clash.json);
    expect(await desired()).toBe(2);
    expect(await server.database.db.scaleEvent.count({ where: { source: "api" } })).toBe(1);
    const queue = new Queue("reconcile", {
      connection: { url: process.env.REDIS_URL! },
      prefix: server.sharedEnv.THAW_QUEUE_PREFIX,
    });
    try {
      expect((await queue.getJobs(["waiting"])).map((j) => j.data as unknown)).toContainEqual({
        endpointId: body.endpointId,
      });
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });

  it.each([
    ["a string", '{"replicas":"3"}', "body.replicas"],
    ["a negative count", '{"replicas":-1}', "body.replicas"],
    ["a fraction", '{"replicas":1.5}', "body.replicas"],
    ["2^53+1", '{"replicas":9007199254740993}', "body.replicas"],
    ["a mass-assigned orgId", '{"replicas":1,"orgId":"x"}', "body.orgId"],
    ["no body", "", "body"],
    ["malformed JSON", '{"replicas":', "body"],
    ["NaN (not JSON)", '{"replicas":NaN}', "body"],
    ["1e400 (Infinity once parsed)", '{"replicas":1e400}', "body.replicas"],
    ["null", '{"replicas":null}', "body.replicas"],
    ["an array", "[1]", "body"],
    ["a NUL byte in a string", '{"replicas":"\\u0000"}', "body.replicas"],
    [
      "a 2,000-deep nested extra field",
      `{"replicas":1,"x":${"[".repeat(2_000)}${"]".repeat(2_000)}}`,
      "body.x",
    ],
  ])("answers %s with 400 naming the field, and stores nothing", async (_what, body, field) => {
    const before = await desired();
    const response = await api("PUT", put, SLUG, { body });
    expect(response.status).toBe(400);
    expect(ErrorResponse.parse(response.json)).toMatchObject({
      error: { code: "BAD_REQUEST", details: { field } },
    });
    expect(await desired()).toBe(before);
  });

  it("answers a count outside the endpoint's own bounds with 422 naming them, and stores nothing", async () => {
    // Valid by the document (0–1000), refused by this endpoint's maxReplicas: a stated rule.
    const before = await desired();
    const response = await api("PUT", put, SLUG, { body: '{"replicas":5}' });
    expect(response.status).toBe(422);
    expect(ErrorResponse.parse(response.json)).toMatchObject({
      error: {
        code: "UNPROCESSABLE",
        details: { field: "body.replicas", minReplicas: 0, maxReplicas: 4 },
      },
    });
    expect(await desired()).toBe(before);
  });

  it("answers an oversized body with 413 and a malformed endpoint name with 404", async () => {
    const big = JSON.stringify({ replicas: 1, pad: "x".repeat(10_000) });
    expect((await api("PUT", put, SLUG, { body: big })).status).toBe(413);
    expect((await api("GET", get, "bad\u0000name")).status).toBe(404);
    expect((await api("GET", get, "x".repeat(500))).status).toBe(404);
  });

  it("reports the status an autoscaler reads", async () => {
    const response = await api("GET", get, SLUG);
    expect(response.status).toBe(200);
    expect(EndpointStatusResponse.parse(response.json)).toMatchObject({
      endpoint: { slug: SLUG },
      desiredReplicas: 2,
      minReplicas: 0,
      maxReplicas: 4,
      replicas: { ready: 0, pending: 0 },
      timeToReadySeconds: { p50: null, samples: 0 },
      lastColdStart: null,
    });
  });

  it("serves the OpenAPI 3.1 document of these routes, generated from their schemas", async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    };
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths["/api/v1/endpoints/{endpoint}/replicas"]!)).toEqual(["put"]);
    expect(Object.keys(document.paths["/api/v1/endpoints/{endpoint}/status"]!)).toEqual(["get"]);
    expect(JSON.stringify(document)).toContain('"maximum":1000');
  });

  it("predicts each path's time-to-ready on the node that would serve it best now", async () => {
    await server.database.db.node.create({
      data: testNodeRow(orgId, { name: "g5-1", agentUrl: null }),
    });
    const response = await api("GET", predictions, SLUG, { key: keys.read });
    expect(response.status).toBe(200);
    const body = EndpointPredictionsResponse.parse(response.json);
    const byPath = Object.fromEntries(body.paths.map((p) => [p.path, p]));
    expect(byPath.pull).toMatchObject({ available: true, nodeName: "g5-1", locality: "cold" });
    expect(byPath.pull!.meanSeconds).toBeGreaterThan(1);
    expect(byPath.pull!.p90Seconds).toBeGreaterThan(byPath.pull!.meanSeconds!);
    expect(byPath.warm).toMatchObject({ available: false });
    expect(byPath.restore).toMatchObject({ available: false });
    expect(byPath.restore!.reason).toMatch(/snapshot/);
    expect((await api("GET", predictions, SLUG, { key: keys.otherOrg })).status).toBe(404);
  });

  it("turns load signals into a desired count with the KPA rule, bounded by the endpoint", async () => {
    const slug = "llama-3-2-3b-instruct";
    const signal = async (body: object) => {
      const response = await api("POST", signals, slug, { body: JSON.stringify(body) });
      expect(response.status).toBe(200);
      return LoadSignalResponse.parse(response.json);
    };
    const db = server.database.db;
    const row = await db.endpoint.findFirstOrThrow({ where: { slug, orgId } });
    // 12 in flight + 12 queued at 8 per replica from nothing: a panic to ceil(24/8) = 3,
    // within the endpoint's bounds.
    const burst = await signal({ inFlightRequests: 12, queueDepth: 12 });
    expect(burst).toMatchObject({ mode: "panic", desiredReplicas: Math.min(3, row.maxReplicas) });
    // A huge burst is capped at maxReplicas.
    const huge = await signal({ inFlightRequests: 10_000 });
    expect(huge.desiredReplicas).toBe(row.maxReplicas);
    expect(huge.reason).toMatch(/bounded/);
    const events = await db.scaleEvent.findMany({
      where: { endpointId: row.id, source: "signal" },
    });
    expect(events.length).toBeGreaterThanOrEqual(1);
    // …and audited, naming the key whose signals moved it.
    const audited = await db.auditLog.findMany({
      where: { targetId: row.id, action: "endpoint.scaled_by_signal" },
    });
    expect(audited.length).toBe(events.length);
    expect(audited.every((a) => a.actorType === "api_key")).toBe(true);
    const stored = await db.endpoint.findUniqueOrThrow({ where: { id: row.id } });
    expect(stored.desiredReplicas).toBe(row.maxReplicas);
    expect((stored.autoscalerState as { samples: unknown[] }).samples).toHaveLength(2);

    for (const bad of [{ inFlightRequests: -1 }, { inFlightRequests: 1.5 }, { queueDepth: 3 }]) {
      const response = await api("POST", signals, slug, { body: JSON.stringify(bad) });
      expect(response.status).toBe(400);
    }
    const readOnly = await api("POST", signals, slug, {
      key: keys.read,
      body: '{"inFlightRequests":1}',
    });
    expect(readOnly.status).toBe(403);
    expect((await db.endpoint.findUniqueOrThrow({ where: { id: row.id } })).desiredReplicas).toBe(
      row.maxReplicas,
    );
  });

  it("reports the same time to ready as the dashboard, over the same starts", async () => {
    // Oldest first: 30 starts of 1,000 s, then 90 of 1…90 s with 10 failures among them, then
    // starts still running and cancelled ones. The window is the last 100 closed starts, so
    // the figures are over 1…90 s alone: p50 45.5 and p95 85.55 interpolated (a nearest-rank
    // p50 would be 46; a window of the last 200 starts of any status would take the 1,000s).
    const slug = "meta-llama-3-8b";
    const db = server.database.db;
    const endpoint = await db.endpoint.findFirstOrThrow({ where: { slug, orgId } });
    const deploymentId = endpoint.activeDeploymentId!;
    const replica = await db.replica.create({
      data: { orgId, endpointId: endpoint.id, deploymentId, state: "stopped" },
    });
    const closed = [
      ...Array.from({ length: 30 }, () => ({ status: "succeeded" as const, actual: 1_000 })),
      ...Array.from({ length: 90 }, (_, i) => [
        { status: "succeeded" as const, actual: ((i * 37) % 90) + 1 },
        ...(i % 9 === 4 ? [{ status: "failed" as const, actual: null }] : []),
      ]).flat(),
    ];
    const open = [
      ...Array.from({ length: 5 }, () => ({ status: "running" as const, actual: null })),
      ...Array.from({ length: 2 }, () => ({ status: "cancelled" as const, actual: null })),
    ];
    const t0 = Date.now() - 86_400_000;
    await db.coldStart.createMany({
      data: [...closed, ...open].map((s, i) => ({
        orgId,
        endpointId: endpoint.id,
        deploymentId,
        replicaId: replica.id,
        attempt: i + 1,
        path: i % 2 === 0 ? ("pull" as const) : ("restore" as const),
        locality: "cold",
        predictedSeconds: 60,
        status: s.status,
        actualSeconds: s.actual,
        requestedAt: new Date(t0 + i * 60_000),
      })),
    });
    expect(closed.length - 30).toBe(TIME_TO_READY_WINDOW);
    const lastClosedAt = new Date(t0 + (closed.length - 1) * 60_000);

    const rest = await api("GET", get, slug, { key: keys.read });
    expect(rest.status).toBe(200);
    const status = EndpointStatusResponse.parse(rest.json);
    expect(status.timeToReadySeconds.samples).toBe(90);
    expect(status.timeToReadySeconds.p50).toBe(45.5);
    expect(status.timeToReadySeconds.p95).toBeCloseTo(85.55, 9);
    expect(status.lastColdStart?.requestedAt).toBe(lastClosedAt.toISOString());

    // The dashboard's endpoint page and endpoint list, through the same server, signed in.
    const signIn = await fetch(`${server.baseUrl}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.baseUrl },
      body: JSON.stringify({ email: DEMO_USER.email, password: DEMO_USER.password }),
    });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const query = async <T>(procedure: string, input?: unknown) => {
      const search =
        input === undefined
          ? ""
          : `?input=${encodeURIComponent(JSON.stringify(superjson.serialize(input)))}`;
      const response = await fetch(`${server.baseUrl}/api/trpc/${procedure}${search}`, {
        headers: { cookie },
      });
      expect(response.status, procedure).toBe(200);
      const body = (await response.json()) as {
        result: { data: Parameters<typeof superjson.deserialize>[0] };
      };
      return superjson.deserialize<T>(body.result.data);
    };
    const detail = await query<{ summary: TimeToReadySummary }>("analytics.endpointDetail", {
      endpoint: slug,
    });
    const list = await query<{ slug: string; coldStarts: TimeToReadySummary }[]>("endpoints.list");
    for (const dashboard of [detail.summary, list.find((e) => e.slug === slug)!.coldStarts]) {
      expect({
        p50: dashboard.p50Seconds,
        p95: dashboard.p95Seconds,
        samples: dashboard.samples,
      }).toEqual(status.timeToReadySeconds);
      expect(dashboard.lastColdStartAt?.toISOString()).toBe(status.lastColdStart?.requestedAt);
    }
  });
});

describe("REST v1: GPU time and cost", () => {
  let server: WebServer;
  let call: ReturnType<typeof restClient>;

  beforeAll(async () => {
    server = await startWebServer();
    call = restClient(
      server.baseUrl,
      await newApiKey(server.database.db, server.orgId, ["endpoints:read"]),
    );
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("answers an endpoint's and the org's GPU time by category, bucket by bucket", async () => {
    const endpoint = await call("GET", `/api/v1/endpoints/${SLUG}/cost?bucket=hour`);
    expect(endpoint.status).toBe(200);
    const report = endpoint.json as {
      gpuSeconds: Record<string, number>;
      series: { at: string }[];
      endpoints?: unknown;
    };
    expect(Object.keys(report.gpuSeconds).sort()).toEqual(
      ["failed", "serving", "starting", "stopping", "total", "warm_idle"].sort(),
    );
    expect(report.series).toHaveLength(24);
    expect(report.endpoints).toBeUndefined();
    const org = await call(
      "GET",
      "/api/v1/cost?bucket=day&from=2026-11-01T00:00:00Z&to=2026-11-08T00:00:00Z",
    );
    expect(org.status).toBe(200);
    expect((org.json as { series: unknown[] }).series).toHaveLength(7);
  });

  it("names the query field a bad window is in", async () => {
    const reversed = await call(
      "GET",
      `/api/v1/endpoints/${SLUG}/cost?from=2026-11-27T10:00:00Z&to=2026-11-27T09:00:00Z`,
    );
    expect(reversed.status).toBe(422);
    expect(ErrorResponse.parse(reversed.json).error.details).toMatchObject({ field: "query.from" });
    const notATime = await call("GET", "/api/v1/cost?to=tomorrow");
    expect(notATime.status).toBe(400);
    expect(JSON.stringify(notATime.json)).toContain("query.to");
    const tooLong = await call(
      "GET",
      "/api/v1/cost?from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z",
    );
    expect(tooLong.status).toBe(422);
    const unknown = await call("GET", "/api/v1/cost?window=1h");
    expect(unknown.status).toBe(400);
  });
});
