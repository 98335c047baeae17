/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-explicit-any --
   answers are first checked against the OpenAPI document's schemas (ajv), then read loosely. */
// The write side of REST v1 and tRPC (endpoints and deployments) on a real database: the
// life of an endpoint, bad input answered 4xx naming the field with nothing stored, and every
// 2xx body checked against the OpenAPI document the API publishes.
import { createApiKey, type Actor } from "@thaw/core";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { Queue } from "bullmq";
import superjson from "superjson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  closeWebTestResources,
  stubWebEnv,
  TEST_DEPLOYMENT,
} from "../../../server/testing/web-test-env.ts";
import type { TrpcContext } from "../../../server/trpc/init.ts";
import type * as RootModule from "../../../server/trpc/root.ts";

type Handler = (
  request: Request,
  context: { params: Promise<Record<string, string>> },
) => Promise<Response>;
type Operation = { responses: Record<string, { content?: Record<string, { schema: object }> }> };

const PREFIX = `rest-write-${Date.now()}`;
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

describe("REST v1 and tRPC: creating, changing, rolling and deleting endpoints", () => {
  let t: TestDatabase;
  let owner: Actor;
  let key: string;
  let otherKey: string;
  let routes: Record<string, Record<string, Handler>>;
  let validators: Map<string, ValidateFunction>;
  let trpcHandler: (request: Request) => Promise<Response>;
  let root: typeof RootModule;
  let demoUser: { id: string; email: string; name: string };
  let validated = 0;

  /** Calls a route; a 2xx JSON answer must match its response schema in the OpenAPI document. */
  const call = async (
    route: string,
    method: string,
    o: { params?: Record<string, string>; body?: string; query?: string; key?: string } = {},
  ) => {
    const handler = routes[route]![method]!;
    const response = await handler(
      new Request(`http://localhost/api/v1/x${o.query ?? ""}`, {
        method,
        headers: { authorization: `Bearer ${o.key ?? key}`, "content-type": "application/json" },
        ...(o.body !== undefined ? { body: o.body } : {}),
      }),
      { params: Promise.resolve(o.params ?? {}) },
    );
    const body = (await response.json()) as Record<string, unknown>;
    const validate = validators.get(`${method} ${route} ${response.status}`);
    if (response.status < 300) {
      expect(validate, `${method} ${route} ${response.status} is in the document`).toBeDefined();
      expect(validate!(body), JSON.stringify(validate!.errors)).toBe(true);
      validated++;
    } else {
      expect(validators.get(`${method} ${route} error`)!(body)).toBe(true);
    }
    return { status: response.status, body: body as Record<string, any> };
  };
  const stored = async () => ({
    endpoints: await t.db.endpoint.count(),
    deployments: await t.db.deployment.count(),
    audit: await t.db.auditLog.count(),
    versions: (await t.db.endpoint.aggregate({ _sum: { version: true } }))._sum.version,
    desired: (await t.db.endpoint.aggregate({ _sum: { desiredReplicas: true } }))._sum
      .desiredReplicas,
  });

  beforeAll(async () => {
    t = await createTestDatabase();
    const seeded = await seedDemo(t.db);
    owner = { type: "user", userId: seeded.userId, orgId: seeded.orgId, role: "owner" };
    const u = await t.db.user.findUniqueOrThrow({ where: { id: seeded.userId } });
    demoUser = { id: u.id, email: u.email, name: u.name };
    key = (
      await createApiKey({
        actor: owner,
        input: {
          name: "writer",
          scopes: ["endpoints:read", "endpoints:write", "deployments:write"],
        },
        db: t.db,
      })
    ).secret;
    const other = await t.db.org.create({ data: { slug: "other", name: "Other" } });
    otherKey = (
      await createApiKey({
        actor: { type: "system", orgId: other.id },
        input: { name: "o", scopes: ["endpoints:read", "endpoints:write", "deployments:write"] },
        db: t.db,
      })
    ).secret;
    stubWebEnv({ databaseUrl: t.url, queuePrefix: PREFIX });
    routes = {
      "/api/v1/endpoints": await import("./endpoints/route.ts"),
      "/api/v1/endpoints/{endpoint}": await import("./endpoints/[endpoint]/route.ts"),
      "/api/v1/endpoints/{endpoint}/deployments":
        await import("./endpoints/[endpoint]/deployments/route.ts"),
      "/api/v1/endpoints/{endpoint}/cold-starts":
        await import("./endpoints/[endpoint]/cold-starts/route.ts"),
      "/api/v1/cold-starts/{id}": await import("./cold-starts/[id]/route.ts"),
    };
    trpcHandler = (await import("../../api/trpc/[trpc]/route.ts")).POST;
    root = await import("../../../server/trpc/root.ts");

    // Compile each operation's response schemas from the published document.
    const { openApiDocument } = await import("../../../server/rest/openapi-document.ts");
    const document = JSON.parse(JSON.stringify(openApiDocument())) as {
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
    await closeWebTestResources();
    await t.drop();
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
      allowedPaths: ["warm", "restore", "lazy", "pull"],
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
      await t.db.auditLog.count({
        where: { action: "endpoint.created", targetId: created.body.id },
      }),
    ).toBe(1);
    expect(await t.db.scaleEvent.count({ where: { endpointId: created.body.id } })).toBe(1);
    const queue = new Queue("reconcile", {
      connection: { url: process.env.REDIS_URL! },
      prefix: PREFIX,
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
    const before = await t.db.endpoint.findFirstOrThrow({ where: { slug: "rest-llama" } });
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
    expect(inverted.status).toBe(400);
    expect(inverted.body.error.details.field).toBe("body.maxReplicas");
  });

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
    const row = await t.db.endpoint.findFirstOrThrow({ where: { slug: "rest-llama" } });
    expect(row.activeDeploymentId).toBe(rolled.body.id);
  });

  it("lists an endpoint's cold starts and reads one with its phases", async () => {
    const row = await t.db.endpoint.findFirstOrThrow({ where: { slug: "rest-llama" } });
    const replica = await t.db.replica.create({
      data: {
        orgId: owner.orgId,
        endpointId: row.id,
        deploymentId: row.activeDeploymentId!,
        state: "ready",
      },
    });
    const coldStart = await t.db.coldStart.create({
      data: {
        orgId: owner.orgId,
        endpointId: row.id,
        deploymentId: row.activeDeploymentId!,
        replicaId: replica.id,
        path: "pull",
        locality: "cold",
        predictedSeconds: 60,
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
    const one = await call("/api/v1/cold-starts/{id}", "GET", { params: { id: coldStart.id } });
    expect(one.body.phases.map((p: { phase: string }) => p.phase)).toEqual(["pull", "ready"]);
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

  const badCreates: [string, unknown, string][] = [
    [
      "NaN maxReplicas (superjson-free JSON has none: a string)",
      { maxReplicas: "NaN" },
      "body.maxReplicas",
    ],
    ["2^53+1 replicas", { maxReplicas: 2 ** 53 + 1 }, "body.maxReplicas"],
    ["negative minReplicas", { minReplicas: -1 }, "body.minReplicas"],
    ["zero maxReplicas", { maxReplicas: 0, desiredReplicas: 0 }, "body.maxReplicas"],
    ["min > max", { minReplicas: 3, maxReplicas: 2 }, "body.minReplicas"],
    ["desired above max", { desiredReplicas: 9 }, "body.desiredReplicas"],
    ["an unknown path", { allowedPaths: ["teleport"] }, "body.allowedPaths.0"],
    ["no paths", { allowedPaths: [] }, "body.allowedPaths"],
    ["an unknown objective", { objective: "p99" }, "body.objective"],
    ["an unknown GPU", { gpuType: "Z9000" }, "body.gpuType"],
    ["a mass-assigned orgId", { orgId: "00000000-0000-4000-8000-000000000000" }, "body.orgId"],
    ["a mass-assigned id", { id: "00000000-0000-4000-8000-000000000000" }, "body.id"],
    [
      "a mass-assigned status",
      { deployment: { ...deployment, status: "active" } },
      "body.deployment.status",
    ],
    ["a NUL byte in the name", { name: "llama\u0000" }, "body.name"],
    ["a malformed slug", { slug: "../etc" }, "body.slug"],
    [
      "a metadata-service model source",
      { deployment: { ...deployment, modelSource: "https://169.254.169.254/latest/meta-data/" } },
      "body.deployment.modelSource",
    ],
    [
      "a loopback registry",
      { deployment: { ...deployment, imageRef: "127.0.0.1:5000/x:1" } },
      "body.deployment.imageRef",
    ],
    [
      "an unknown engine",
      { deployment: { ...deployment, engine: "tensorflow" } },
      "body.deployment.engine",
    ],
    [
      "negative model bytes",
      { deployment: { ...deployment, modelBytes: -1 } },
      "body.deployment.modelBytes",
    ],
    [
      "a 2,000-deep nested extra field",
      { x: JSON.parse(`${"[".repeat(2_000)}${"]".repeat(2_000)}`) as unknown },
      "body.x",
    ],
  ];
  it.each(badCreates)(
    "POST /endpoints answers %s with 400 naming the field, storing nothing",
    async (_what, extra, field) => {
      const before = await stored();
      const answer = await call("/api/v1/endpoints", "POST", {
        body: JSON.stringify(endpointBody("bad-input", extra as object)),
      });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ code: "BAD_REQUEST", details: { field } });
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
    ).toBe(400);
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

  it("tRPC: the same use cases, errors naming the field, NaN and Infinity through superjson refused", async () => {
    const caller = root.createCaller({
      db: t.db,
      user: demoUser,
      orgSlug: undefined,
    } satisfies TrpcContext);
    const before = await stored();
    for (const [bad, field] of [
      [{ maxReplicas: Number.NaN }, "input.maxReplicas"],
      [{ maxReplicas: Infinity }, "input.maxReplicas"],
      [{ minReplicas: 0.5 }, "input.minReplicas"],
      [{ orgId: owner.orgId }, "input.orgId"],
    ] as const) {
      const error = await caller.endpoints
        .create(endpointBody("trpc-bad", bad) as never)
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "BAD_REQUEST", cause: { details: { field } } });
    }
    const update = await caller.endpoints
      .update({ endpoint: "rest-llama", changes: { objective: "p99" as never } })
      .catch((e: unknown) => e);
    expect(update).toMatchObject({ cause: { details: { field: "changes.objective" } } });
    const roll = await caller.deployments
      .create({ endpoint: "rest-llama", deployment: { ...deployment, imageBytes: -5 } })
      .catch((e: unknown) => e);
    expect(roll).toMatchObject({ cause: { details: { field: "deployment.imageBytes" } } });
    await expect(
      caller.deployments.list({ endpoint: "rest-llama", limit: 1e9 }),
    ).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    expect(await stored()).toEqual(before);

    const created = await caller.endpoints.create(endpointBody("trpc-made"));
    expect(created.activeDeployment?.version).toBe(1);
    const deleted = await caller.endpoints.delete({ endpoint: "trpc-made" });
    expect(deleted.slug).toBe("trpc-made");
    // The slug is free again, and the deleted endpoint is gone from every read.
    await expect(caller.deployments.list({ endpoint: "trpc-made" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });

  it("tRPC over HTTP: a 1,000-procedure batch and an oversized body are refused, nothing runs", async () => {
    const before = await stored();
    const paths = Array.from({ length: 1_000 }, () => "endpoints.create").join(",");
    const input = Object.fromEntries(
      Array.from({ length: 1_000 }, (_, i) => [i, superjson.serialize(endpointBody(`batch-${i}`))]),
    );
    const batch = await trpcHandler(
      new Request(`http://localhost/api/trpc/${paths}?batch=1`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(input),
      }),
    );
    expect(batch.status).toBe(400);
    expect(await batch.text()).toMatch(/Batch call exceeds maximum size/);
    const big = await trpcHandler(
      new Request("http://localhost/api/trpc/endpoints.create", {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(3 * 1024 * 1024) },
        body: JSON.stringify({ json: { pad: "x".repeat(3 * 1024 * 1024 - 20) } }),
      }),
    );
    expect(big.status).toBe(413);
    expect(await stored()).toEqual(before);
  });

  it("deletes softly: desired 0, audited, gone from reads, slug reusable, replicas left to drain", async () => {
    const row = await t.db.endpoint.findFirstOrThrow({ where: { slug: "rest-llama" } });
    const deleted = await call("/api/v1/endpoints/{endpoint}", "DELETE", {
      params: { endpoint: "rest-llama" },
    });
    expect(deleted.status).toBe(200);
    const after = await t.db.endpoint.findUniqueOrThrow({ where: { id: row.id } });
    expect(after.deletedAt).not.toBeNull();
    expect(after.desiredReplicas).toBe(0);
    expect(
      await t.db.auditLog.count({ where: { action: "endpoint.deleted", targetId: row.id } }),
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
    const { reconcileEndpoint } = await import("@thaw/core");
    const result = await reconcileEndpoint({ db: t.db, endpointId: row.id });
    expect(result.desired).toBe(0);
    const replicas = await t.db.replica.findMany({ where: { endpointId: row.id } });
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
