/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-explicit-any --
   answers are first checked against the OpenAPI document's schemas (ajv), then read loosely. */
// The write side of REST v1 (endpoints and deployments) through the built server over HTTP:
// the life of an endpoint, bad input answered 4xx naming the field with nothing stored, and
// every answer checked against the OpenAPI document the server publishes. tRPC's HTTP limits
// (batch size, body size) too; tRPC's use-case errors are tested in apps/web.
import { reconcileEndpoint } from "@thaw/core";
import { DEMO_USER } from "@thaw/db/seed";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { Queue } from "bullmq";
import superjson from "superjson";
import { TEST_DEPLOYMENT } from "@thaw/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../web-server.ts";
import { newApiKey, restClient } from "./rest-client.ts";

type Operation = { responses: Record<string, { content?: Record<string, { schema: object }> }> };

const deployment = TEST_DEPLOYMENT;
const endpointBody = (slug: string, extra: object = {}) => ({
  slug,
  name: "Llama 3.2 3B",
  gpuType: "L40S",
  minReplicas: 0,
  maxReplicas: 3,
  desiredReplicas: 1,
  deployment,
  ...extra,
});

describe("REST v1: creating, changing, rolling and deleting endpoints", () => {
  let server: WebServer;
  let orgId: string;
  let key: string;
  let otherKey: string;
  let validators: Map<string, ValidateFunction>;
  let validated = 0;
  const db = () => server.database.db;

  /**
   * Calls a route of the document (`route` is its path template, filled from `params`); a
   * 2xx JSON answer must match its response schema in the served OpenAPI document, and an
   * error the document's error schema.
   */
  const call = async (
    route: string,
    method: string,
    o: { params?: Record<string, string>; body?: string; query?: string; key?: string } = {},
  ) => {
    const path = route.replace(/\{(\w+)\}/g, (_, name: string) =>
      encodeURIComponent(o.params?.[name] ?? ""),
    );
    const answer = await restClient(server.baseUrl, o.key ?? key)(
      method,
      `${path}${o.query ?? ""}`,
      {
        ...(o.body !== undefined ? { body: o.body } : {}),
        headers: { "content-type": "application/json" },
      },
    );
    const body = answer.json as Record<string, unknown>;
    const validate = validators.get(`${method} ${route} ${answer.status}`);
    if (answer.status < 300) {
      expect(validate, `${method} ${route} ${answer.status} is in the document`).toBeDefined();
      expect(validate!(body), JSON.stringify(validate!.errors)).toBe(true);
      validated++;
    } else {
      expect(validators.get(`${method} ${route} error`)!(body), answer.text).toBe(true);
    }
    return { status: answer.status, body: body as Record<string, any> };
  };
  const stored = async () => ({
    endpoints: await db().endpoint.count(),
    deployments: await db().deployment.count(),
    audit: await db().auditLog.count(),
    versions: (await db().endpoint.aggregate({ _sum: { version: true } }))._sum.version,
    desired: (await db().endpoint.aggregate({ _sum: { desiredReplicas: true } }))._sum
      .desiredReplicas,
  });

  beforeAll(async () => {
    server = await startWebServer({ env: { THAW_REST_RATE_LIMIT_PER_MINUTE: "100000" } });
    orgId = server.orgId;
    key = await newApiKey(db(), orgId, ["endpoints:read", "endpoints:write", "deployments:write"], {
      name: "writer",
    });
    const other = await db().org.create({ data: { slug: "other", name: "Other" } });
    otherKey = await newApiKey(db(), other.id, [
      "endpoints:read",
      "endpoints:write",
      "deployments:write",
    ]);

    // Compile each operation's response schemas from the document the server publishes.
    const document = (await (await fetch(`${server.baseUrl}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, object> };
    };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: "openapi", components: document.components });
    const ref = (schema: object) =>
      JSON.parse(
        JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'),
      ) as object;
    validators = new Map();
    for (const [path, methods] of Object.entries(document.paths))
      for (const [method, op] of Object.entries(methods))
        for (const [status, response] of Object.entries(op.responses)) {
          const schema = response.content?.["application/json"]?.schema;
          if (!schema) continue;
          const name = `${method.toUpperCase()} ${path} ${Number(status) < 300 ? status : "error"}`;
          if (!validators.has(name)) validators.set(name, ajv.compile(ref(schema)));
        }
  });
  afterAll(async () => {
    expect(validated).toBeGreaterThanOrEqual(10);
    await server?.stop();
  });

  it("creates an endpoint with its first, active deployment, audited, and enqueues reconcile", async () => {
    const created = await call("/api/v1/endpoints", "POST", {
      body: JSON.stringify(endpointBody("rest-llama")),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      slug: "rest-llama",
      gpuType: "L40S",
      desiredReplicas: 1,
      allowedPaths: ["warm", "wake", "restore", "peer", "lazy", "pull"],
      objective: "mean",
      activeDeployment: {
        version: 1,
        status: "active",
        imageBytes: 7_700_000_000,
        engineProfile: { loader: "sequential", compileSeconds: 27 },
      },
    });
    // Layers derived from the size: they add up to it.
    const layers = created.body.activeDeployment.imageLayers as { bytes: number }[];
    expect(layers.reduce((s, l) => s + l.bytes, 0)).toBe(7_700_000_000);
    expect(
      await db().auditLog.count({
        where: { action: "endpoint.created", targetId: created.body.id },
      }),
    ).toBe(1);
    expect(await db().scaleEvent.count({ where: { endpointId: created.body.id } })).toBe(1);
    const queue = new Queue("reconcile", {
      connection: { url: process.env.REDIS_URL! },
      prefix: server.sharedEnv.THAW_QUEUE_PREFIX,
    });
    try {
      expect((await queue.getJobs(["waiting"])).map((j) => j.data as unknown)).toContainEqual({
        endpointId: created.body.id,
      });
    } finally {
      await queue.close();
    }
    const again = await call("/api/v1/endpoints", "POST", {
      body: JSON.stringify(endpointBody("rest-llama")),
    });
    expect(again.status).toBe(409);
    expect(again.body.error.details.field).toBe("body.slug");

    const got = await call("/api/v1/endpoints/{endpoint}", "GET", {
      params: { endpoint: "rest-llama" },
    });
    expect(got.body.id).toBe(created.body.id);
    const listed = await call("/api/v1/endpoints", "GET");
    expect((listed.body.endpoints as { slug: string }[]).map((e) => e.slug)).toContain(
      "rest-llama",
    );
    expect((await call("/api/v1/endpoints", "GET", { key: otherKey })).body.endpoints).toEqual([]);
  });

  it("changes bounds (desired clamped), paths and objective with a version bump", async () => {
    const before = await db().endpoint.findFirstOrThrow({ where: { slug: "rest-llama" } });
    const patched = await call("/api/v1/endpoints/{endpoint}", "PATCH", {
      params: { endpoint: "rest-llama" },
      body: JSON.stringify({
        minReplicas: 2,
        maxReplicas: 2,
        allowedPaths: ["pull"],
        objective: "p90",
      }),
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      minReplicas: 2,
      maxReplicas: 2,
      desiredReplicas: 2,
      allowedPaths: ["pull"],
      objective: "p90",
      version: before.version + 1,
    });
    const inverted = await call("/api/v1/endpoints/{endpoint}", "PATCH", {
      params: { endpoint: "rest-llama" },
      body: JSON.stringify({ maxReplicas: 1 }),
    });
    // Valid by the document; the endpoint's minReplicas (2) makes it a broken rule: 422.
    expect(inverted.status).toBe(422);
    expect(inverted.body.error.details.field).toBe("body.maxReplicas");
  });

  it("takes a price of waiting at creation and by PATCH (a number, or null for the org's default), audited", async () => {
    const created = await call("/api/v1/endpoints", "POST", {
      body: JSON.stringify(endpointBody("rest-priced", { gpuSecondsPerWaitSecond: 12.5 })),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      gpuSecondsPerWaitSecond: 12.5,
      effectiveGpuSecondsPerWaitSecond: { value: 12.5, source: "endpoint" },
    });
    const id = created.body.id as string;
    const price = async () =>
      (await db().endpoint.findUniqueOrThrow({ where: { id } })).gpuSecondsPerWaitSecond;
    expect(await price()).toBe(12.5);

    const zero = await call("/api/v1/endpoints/{endpoint}", "PATCH", {
      params: { endpoint: "rest-priced" },
      body: JSON.stringify({ gpuSecondsPerWaitSecond: 0 }),
    });
    expect(zero.status).toBe(200);
    expect(zero.body).toMatchObject({
      gpuSecondsPerWaitSecond: 0,
      effectiveGpuSecondsPerWaitSecond: { value: 0, source: "endpoint" },
    });
    expect(await price()).toBe(0);

    // Null hands it back to the org's default (the platform's when the org sets none).
    await db().org.update({ where: { id: orgId }, data: { gpuSecondsPerWaitSecond: 7 } });
    try {
      const cleared = await call("/api/v1/endpoints/{endpoint}", "PATCH", {
        params: { endpoint: "rest-priced" },
        body: JSON.stringify({ gpuSecondsPerWaitSecond: null }),
      });
      expect(cleared.status).toBe(200);
      expect(cleared.body).toMatchObject({
        gpuSecondsPerWaitSecond: null,
        effectiveGpuSecondsPerWaitSecond: { value: 7, source: "org" },
      });
      expect(await price()).toBeNull();
    } finally {
      await db().org.update({ where: { id: orgId }, data: { gpuSecondsPerWaitSecond: null } });
    }
    const got = await call("/api/v1/endpoints/{endpoint}", "GET", {
      params: { endpoint: "rest-priced" },
    });
    expect(got.body.effectiveGpuSecondsPerWaitSecond).toEqual({ value: null, source: "platform" });

    const audits = await db().auditLog.findMany({
      where: { action: "endpoint.updated", targetId: id },
      orderBy: { createdAt: "asc" },
    });
    expect(audits.map((a) => a.metadata)).toEqual([
      expect.objectContaining({
        before: { gpuSecondsPerWaitSecond: 12.5 },
        after: { gpuSecondsPerWaitSecond: 0 },
      }),
      expect.objectContaining({
        before: { gpuSecondsPerWaitSecond: 0 },
        after: { gpuSecondsPerWaitSecond: null },
      }),
    ]);
  });

  const badPrices: [string, string][] = [
    ["a negative price", "-1"],
    ["a price above 100000", "100001"],
    ["a price as a string", '"4"'],
    ["a price as a boolean", "true"],
    ["an infinite price (1e400)", "1e400"],
  ];
  it.each(badPrices)(
    "POST and PATCH answer %s with 400 naming body.gpuSecondsPerWaitSecond, storing nothing",
    async (_what, raw) => {
      const before = await stored();
      const priceBefore = (await db().endpoint.findFirstOrThrow({ where: { slug: "rest-priced" } }))
        .gpuSecondsPerWaitSecond;
      const created = await call("/api/v1/endpoints", "POST", {
        body: JSON.stringify(endpointBody("bad-price", { gpuSecondsPerWaitSecond: 1 })).replace(
          '"gpuSecondsPerWaitSecond":1',
          `"gpuSecondsPerWaitSecond":${raw}`,
        ),
      });
      const patched = await call("/api/v1/endpoints/{endpoint}", "PATCH", {
        params: { endpoint: "rest-priced" },
        body: `{"minReplicas":1,"gpuSecondsPerWaitSecond":${raw}}`,
      });
      for (const answer of [created, patched]) {
        expect(answer.status).toBe(400);
        expect(answer.body.error).toMatchObject({
          code: "BAD_REQUEST",
          details: { field: "body.gpuSecondsPerWaitSecond" },
        });
      }
      expect(await stored()).toEqual(before);
      expect(
        (await db().endpoint.findFirstOrThrow({ where: { slug: "rest-priced" } }))
          .gpuSecondsPerWaitSecond,
      ).toBe(priceBefore);
    },
  );

  it("rolls to a new deployment: the old one superseded, versions listed newest first", async () => {
    const rolled = await call("/api/v1/endpoints/{endpoint}/deployments", "POST", {
      params: { endpoint: "rest-llama" },
      body: JSON.stringify({
        ...deployment,
        imageRef: "registry.example.com/vllm-openai:v0.12.0",
        imageDigest: `sha256:${"c".repeat(64)}`,
        estargzImageRef: "registry.example.com/vllm-openai:v0.12.0-esgz",
        engineProfile: { warmupSeconds: 12 },
      }),
    });
    expect(rolled.status).toBe(201);
    expect(rolled.body).toMatchObject({ version: 2, status: "active" });
    expect(rolled.body.estargzDigest).toMatch(/^sha256:/);
    expect(rolled.body.engineProfile).toMatchObject({ warmupSeconds: 12, compileSeconds: 27 });
    const list = await call("/api/v1/endpoints/{endpoint}/deployments", "GET", {
      params: { endpoint: "rest-llama" },
      query: "?limit=5",
    });
    expect(
      list.body.deployments.map((d: { version: number; status: string }) => [d.version, d.status]),
    ).toEqual([
      [2, "active"],
      [1, "superseded"],
    ]);
    const row = await db().endpoint.findFirstOrThrow({ where: { slug: "rest-llama" } });
    expect(row.activeDeploymentId).toBe(rolled.body.id);
  });

  it("lists an endpoint's cold starts and reads one with its phases", async () => {
    const row = await db().endpoint.findFirstOrThrow({ where: { slug: "rest-llama" } });
    const replica = await db().replica.create({
      data: {
        orgId,
        endpointId: row.id,
        deploymentId: row.activeDeploymentId!,
        state: "ready",
      },
    });
    const coldStart = await db().coldStart.create({
      data: {
        orgId,
        endpointId: row.id,
        deploymentId: row.activeDeploymentId!,
        replicaId: replica.id,
        path: "pull",
        locality: "cold",
        predictedSeconds: 60,
        predictedMeanSeconds: 48,
        predictedP10Seconds: 31,
        predictedP90Seconds: 60,
        actualSeconds: 55,
        status: "succeeded",
        phases: {
          create: [
            {
              sequence: 1,
              phase: "pull",
              startedAt: new Date(),
              seconds: 40,
              bytes: 7_700_000_000n,
            },
            { sequence: 2, phase: "ready", startedAt: new Date(), seconds: 0 },
          ],
        },
      },
    });
    const list = await call("/api/v1/endpoints/{endpoint}/cold-starts", "GET", {
      params: { endpoint: "rest-llama" },
    });
    expect(list.body.coldStarts.map((c: { id: string }) => c.id)).toEqual([coldStart.id]);
    const prediction = {
      predictedSeconds: 60,
      predictedMeanSeconds: 48,
      predictedP10Seconds: 31,
      predictedP90Seconds: 60,
    };
    expect(list.body.coldStarts[0]).toMatchObject(prediction);
    const one = await call("/api/v1/cold-starts/{id}", "GET", { params: { id: coldStart.id } });
    expect(one.body.phases.map((p: { phase: string }) => p.phase)).toEqual(["pull", "ready"]);
    expect(one.body).toMatchObject(prediction);
    // 55 s fell inside its predicted 31–60 s: one start, all inside, too few to judge.
    const status = await call("/api/v1/endpoints/{endpoint}/status", "GET", {
      params: { endpoint: "rest-llama" },
    });
    expect(status.body.predictionCalibration).toEqual({
      starts: 1,
      inside: 1,
      faster: 0,
      slower: 0,
      insideShare: 1,
      verdict: "too-few-starts",
    });
    expect(
      (
        await call("/api/v1/cold-starts/{id}", "GET", {
          params: { id: coldStart.id },
          key: otherKey,
        })
      ).status,
    ).toBe(404);
    const bounded = await call("/api/v1/endpoints/{endpoint}/cold-starts", "GET", {
      params: { endpoint: "rest-llama" },
      query: "?limit=1e9",
    });
    expect(bounded.status).toBe(400);
    expect(bounded.body.error.details.field).toBe("query.limit");
  });

  // 400: the document refuses it; 422: the document allows it, a rule it states refuses it.
  const badCreates: [string, unknown, string, 400 | 422][] = [
    [
      "NaN maxReplicas (superjson-free JSON has none: a string)",
      { maxReplicas: "NaN" },
      "body.maxReplicas",
      400,
    ],
    ["2^53+1 replicas", { maxReplicas: 2 ** 53 + 1 }, "body.maxReplicas", 400],
    ["negative minReplicas", { minReplicas: -1 }, "body.minReplicas", 400],
    ["zero maxReplicas", { maxReplicas: 0, desiredReplicas: 0 }, "body.maxReplicas", 400],
    ["min > max", { minReplicas: 3, maxReplicas: 2 }, "body.minReplicas", 422],
    ["desired above max", { desiredReplicas: 9 }, "body.desiredReplicas", 422],
    ["an unknown path", { allowedPaths: ["teleport"] }, "body.allowedPaths.0", 400],
    ["no paths", { allowedPaths: [] }, "body.allowedPaths", 400],
    ["an unknown objective", { objective: "p99" }, "body.objective", 400],
    ["an unknown GPU", { gpuType: "Z9000" }, "body.gpuType", 422],
    ["a mass-assigned orgId", { orgId: "00000000-0000-4000-8000-000000000000" }, "body.orgId", 400],
    ["a mass-assigned id", { id: "00000000-0000-4000-8000-000000000000" }, "body.id", 400],
    [
      "a mass-assigned status",
      { deployment: { ...deployment, status: "active" } },
      "body.deployment.status",
      400,
    ],
    ["a NUL byte in the name", { name: "llama\u0000" }, "body.name", 422],
    ["a malformed slug", { slug: "../etc" }, "body.slug", 400],
    [
      "a metadata-service model source",
      { deployment: { ...deployment, modelSource: "https://169.254.169.254/latest/meta-data/" } },
      "body.deployment.modelSource",
      422,
    ],
    [
      "a loopback registry",
      { deployment: { ...deployment, imageRef: "127.0.0.1:5000/x:1" } },
      "body.deployment.imageRef",
      422,
    ],
    // Accepted by the API before, refused by every agent (issue 23, finding 9): one grammar now.
    ...["-k/foo", "--privileged/x", ".x.com/foo", "[2001:db8::1]:5000/foo"].map(
      (imageRef): [string, unknown, string, 400 | 422] => [
        `the image reference ${imageRef}`,
        { deployment: { ...deployment, imageRef } },
        "body.deployment.imageRef",
        400,
      ],
    ),
    [
      "an unknown engine",
      { deployment: { ...deployment, engine: "tensorflow" } },
      "body.deployment.engine",
      400,
    ],
    [
      "negative model bytes",
      { deployment: { ...deployment, modelBytes: -1 } },
      "body.deployment.modelBytes",
      400,
    ],
    [
      "a 2,000-deep nested extra field",
      { x: JSON.parse(`${"[".repeat(2_000)}${"]".repeat(2_000)}`) as unknown },
      "body.x",
      400,
    ],
  ];
  it.each(badCreates)(
    "POST /endpoints answers %s with 4xx naming the field, storing nothing",
    async (_what, extra, field, status) => {
      const before = await stored();
      const answer = await call("/api/v1/endpoints", "POST", {
        body: JSON.stringify(endpointBody("bad-input", extra as object)),
      });
      expect(answer.status).toBe(status);
      expect(answer.body.error).toMatchObject({
        code: status === 400 ? "BAD_REQUEST" : "UNPROCESSABLE",
        details: { field },
      });
      expect(await stored()).toEqual(before);
    },
  );

  it("refuses Infinity (1e400), malformed JSON, oversized bodies, bad ids and bad queries", async () => {
    const before = await stored();
    const raw = JSON.stringify(endpointBody("bad-input")).replace(
      '"maxReplicas":3',
      '"maxReplicas":1e400',
    );
    const infinite = await call("/api/v1/endpoints", "POST", { body: raw });
    expect(infinite.body.error.details.field).toBe("body.maxReplicas");
    expect((await call("/api/v1/endpoints", "POST", { body: "{" })).body.error.details.field).toBe(
      "body",
    );
    const big = JSON.stringify(endpointBody("bad-input", { name: "x".repeat(100_000) }));
    expect((await call("/api/v1/endpoints", "POST", { body: big })).status).toBe(413);
    const patchBad = await call("/api/v1/endpoints/{endpoint}", "PATCH", {
      params: { endpoint: "rest-llama" },
      body: JSON.stringify({ slug: "renamed", status: "x" }),
    });
    expect(patchBad.body.error.details.field).toBe("body.slug");
    expect(
      (
        await call("/api/v1/endpoints/{endpoint}", "PATCH", {
          params: { endpoint: "rest-llama" },
          body: "{}",
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await call("/api/v1/endpoints/{endpoint}", "GET", {
          params: { endpoint: "NOT A SLUG\u0000" },
        })
      ).status,
    ).toBe(404);
    const badId = await call("/api/v1/cold-starts/{id}", "GET", { params: { id: "1 OR 1=1" } });
    expect(badId.status).toBe(400);
    expect(badId.body.error.details.field).toBe("input.id");
    const limit = await call("/api/v1/endpoints/{endpoint}/deployments", "GET", {
      params: { endpoint: "rest-llama" },
      query: "?limit=1e9",
    });
    expect(limit.body.error.details.field).toBe("query.limit");
    const unknown = await call("/api/v1/endpoints/{endpoint}/deployments", "GET", {
      params: { endpoint: "rest-llama" },
      query: "?orgId=x",
    });
    expect(unknown.body.error.details.field).toBe("query.orgId");
    const otherOrg = await call("/api/v1/endpoints/{endpoint}/deployments", "POST", {
      params: { endpoint: "rest-llama" },
      body: JSON.stringify(deployment),
      key: otherKey,
    });
    expect(otherOrg.status).toBe(404);
    expect(await stored()).toEqual(before);
  });

  const sessionCookie = async () => {
    const signIn = await fetch(`${server.baseUrl}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.baseUrl },
      body: JSON.stringify({ email: DEMO_USER.email, password: DEMO_USER.password }),
    });
    expect(signIn.status).toBe(200);
    return signIn.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
  };

  it("tRPC over HTTP, signed in: a 200-procedure batch and an oversized body are refused, nothing runs", async () => {
    // Signed in first: a sign-in is audited, and this test counts what the batch wrote.
    const cookie = await sessionCookie();
    const before = await stored();
    // 200 procedures: past the batch limit (50), and a URL Node's header limit still takes
    // (1,000 are refused earlier, with 431, by the HTTP server itself).
    const paths = Array.from({ length: 200 }, () => "endpoints.create").join(",");
    const input = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [i, superjson.serialize(endpointBody(`batch-${i}`))]),
    );
    const batch = await fetch(`${server.baseUrl}/api/trpc/${paths}?batch=1`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie },
      body: JSON.stringify(input),
    });
    expect(batch.status).toBe(400);
    expect(await batch.text()).toMatch(/Batch call exceeds maximum size/);
    const big = await fetch(`${server.baseUrl}/api/trpc/endpoints.create`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie },
      body: JSON.stringify({ json: { pad: "x".repeat(3 * 1024 * 1024 - 20) } }),
    });
    expect(big.status).toBe(413);
    expect(await stored()).toEqual(before);
  });

  it("deletes softly: desired 0, audited, gone from reads, slug reusable, replicas left to drain", async () => {
    const row = await db().endpoint.findFirstOrThrow({ where: { slug: "rest-llama" } });
    const deleted = await call("/api/v1/endpoints/{endpoint}", "DELETE", {
      params: { endpoint: "rest-llama" },
    });
    expect(deleted.status).toBe(200);
    const after = await db().endpoint.findUniqueOrThrow({ where: { id: row.id } });
    expect(after.deletedAt).not.toBeNull();
    expect(after.desiredReplicas).toBe(0);
    expect(
      await db().auditLog.count({ where: { action: "endpoint.deleted", targetId: row.id } }),
    ).toBe(1);
    expect(
      (await call("/api/v1/endpoints/{endpoint}", "GET", { params: { endpoint: "rest-llama" } }))
        .status,
    ).toBe(404);
    expect(
      (await call("/api/v1/endpoints/{endpoint}", "DELETE", { params: { endpoint: "rest-llama" } }))
        .status,
    ).toBe(404);
    // The scheduler's reconcile sees the deleted endpoint as wanting nothing and drains its replica.
    const result = await reconcileEndpoint({ db: db(), endpointId: row.id });
    expect(result.desired).toBe(0);
    const replicas = await db().replica.findMany({ where: { endpointId: row.id } });
    expect(replicas.map((r) => r.state)).toEqual(["draining"]);
    const handedOn = [
      ...result.toStop.map((s) => s.replicaId),
      ...((result as { parking?: string[] }).parking ?? []),
    ];
    expect(handedOn).toEqual([replicas[0]!.id]);
    const reused = await call("/api/v1/endpoints", "POST", {
      body: JSON.stringify(endpointBody("rest-llama")),
    });
    expect(reused.status).toBe(201);
    expect(reused.body.id).not.toBe(row.id);
  });
});
