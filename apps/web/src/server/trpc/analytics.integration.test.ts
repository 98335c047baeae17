// The dashboard's read side through tRPC on a real database: an endpoint's page, the
// breakdown of a deployment's cold starts, the endpoint list's figures, the cold start's
// bottleneck hints, and the dashboard's scale control — org-scoped, readable by a viewer.
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "../auth.ts";
import { closeWebTestResources, stubWebEnv } from "../testing/web-test-env.ts";
import type { TrpcContext } from "./init.ts";
import type * as RootModule from "./root.ts";

const SLUG = "gpt-oss-20b"; // one 12 GB gzip-9 weights layer + 0.9 GB of code; min 0, max 3
const PREFIX = `analytics-test-${Date.now()}`;
const MINUTE = 60_000;

describe("tRPC analytics and scaling", () => {
  let t: TestDatabase;
  let root: typeof RootModule;
  let owner: SessionUser;
  let viewer: SessionUser;
  let orgId: string;
  let deploymentId: string;
  let orgBDeploymentId: string;
  let pullIds: string[] = [];
  const ctx = (user: SessionUser | null): TrpcContext => ({ db: t.db, user, orgSlug: undefined });

  beforeAll(async () => {
    t = await createTestDatabase();
    ({ orgId } = await seedDemo(t.db));
    const demo = await t.db.user.findFirstOrThrow({ where: { email: "demo@thaw.dev" } });
    owner = { id: demo.id, email: demo.email, name: demo.name };
    const v = await t.db.user.create({
      data: {
        id: crypto.randomUUID(),
        email: "viewer@a.test",
        name: "Viewer",
        emailVerified: true,
      },
    });
    await t.db.membership.create({ data: { orgId, userId: v.id, role: "viewer" } });
    viewer = { id: v.id, email: v.email, name: v.name };

    const endpoint = await t.db.endpoint.findFirstOrThrow({ where: { orgId, slug: SLUG } });
    deploymentId = endpoint.activeDeploymentId!;
    // A g6e.xlarge on its default gp3 root volume: 125 MiB/s write.
    const node = await t.db.node.create({
      data: {
        orgId,
        name: "sim-g6e-1",
        provider: "sim",
        runtime: "sim",
        instanceType: "g6e.xlarge",
        gpuModel: "L40S",
        gpuCount: 1,
        vcpus: 4,
        networkGbps: 20,
        diskReadMiBps: 125,
        diskWriteMiBps: 125,
        pcieGBps: 25,
        state: "ready",
      },
    });
    const replica = await t.db.replica.create({
      data: {
        orgId,
        endpointId: endpoint.id,
        deploymentId,
        nodeId: node.id,
        state: "ready",
        readyAt: new Date(),
      },
    });
    const t0 = Date.now() - 60 * MINUTE;
    // Three pulls (410 s predicted; 400, 420, 500 s actual), one restore (6 s), one failure.
    const starts = [
      { path: "pull", at: 0, predicted: 410, actual: 400, pull: 360 },
      { path: "pull", at: 10, predicted: 410, actual: 420, pull: 380 },
      { path: "pull", at: 20, predicted: 410, actual: 500, pull: 460 },
      { path: "restore", at: 30, predicted: 5, actual: 6, pull: 0 },
      { path: "pull", at: 40, predicted: 410, actual: null, pull: 100 },
    ] as const;
    for (const [i, s] of starts.entries()) {
      const cs = await t.db.coldStart.create({
        data: {
          orgId,
          endpointId: endpoint.id,
          deploymentId,
          replicaId: replica.id,
          nodeId: node.id,
          attempt: i + 1,
          path: s.path,
          locality: "cold",
          predictedSeconds: s.predicted,
          actualSeconds: s.actual,
          status: s.actual === null ? "failed" : "succeeded",
          requestedAt: new Date(t0 + s.at * MINUTE),
        },
      });
      if (s.path === "pull") pullIds.push(cs.id);
      const phases =
        s.path === "restore"
          ? [{ phase: "restore" as const, seconds: 6, bytes: 3.4e9 }]
          : [
              { phase: "pull" as const, seconds: s.pull, bytes: 12.9e9 },
              { phase: "create" as const, seconds: 1, bytes: 0 },
              { phase: "start" as const, seconds: 12, bytes: 0 },
              { phase: "load_weights" as const, seconds: 27, bytes: 12e9 },
            ];
      await t.db.phaseEvent.createMany({
        data: phases.map((p, sequence) => ({
          coldStartId: cs.id,
          sequence: sequence + 1,
          phase: p.phase,
          startedAt: new Date(t0 + s.at * MINUTE),
          seconds: p.seconds,
          bytes: BigInt(p.bytes),
          throughputBps: p.bytes / p.seconds,
          attributes: { simulated: true },
        })),
      });
    }
    pullIds = pullIds.slice(0, 3);

    const orgB = await t.db.org.create({ data: { slug: "org-b", name: "Org B" } });
    const bEndpoint = await t.db.endpoint.create({
      data: { orgId: orgB.id, slug: "b-private-model", name: "B private", gpuType: "L40S" },
    });
    orgBDeploymentId = (
      await t.db.deployment.create({
        data: {
          orgId: orgB.id,
          endpointId: bEndpoint.id,
          version: 1,
          imageRef: "registry.b/x:1",
          imageDigest: "sha256:b",
          imageBytes: 1n,
          modelSource: "hf://b/x",
          modelBytes: 1n,
          modelFormat: "gguf",
          engine: "llama.cpp",
        },
      })
    ).id;

    stubWebEnv({ databaseUrl: t.url, queuePrefix: PREFIX });
    root = await import("./root.ts");
  });
  afterAll(async () => {
    await closeWebTestResources();
    await t.drop();
  });

  it("a viewer reads the endpoint's page: config, deployments, live replicas, figures", async () => {
    const detail = await root
      .createCaller(ctx(viewer))
      .analytics.endpointDetail({ endpoint: SLUG });
    expect(detail.endpoint).toMatchObject({ slug: SLUG, minReplicas: 0, maxReplicas: 3 });
    expect(detail.deployments).toEqual([
      expect.objectContaining({ id: deploymentId, status: "active", active: true, version: 1 }),
    ]);
    expect(detail.replicas).toEqual([
      expect.objectContaining({ state: "ready", nodeName: "sim-g6e-1", deploymentVersion: 1 }),
    ]);
    expect(detail.replicaCounts).toEqual({
      ready: 1,
      warm: 0,
      sleeping: 0,
      starting: 0,
      draining: 0,
    });
    // Time to ready over the four succeeded starts: 6, 400, 420, 500.
    expect(detail.summary.samples).toBe(4);
    expect(detail.summary.p50Seconds).toBe(410);
    expect(detail.summary.p95Seconds).toBeCloseTo(420 + 0.85 * 80);
    expect(detail.summary.pathMix).toEqual({
      warm: 0,
      wake: 0,
      restore: 1,
      peer: 0,
      lazy: 0,
      pull: 4,
    });
  });

  it("the deployment breakdown: phases per start, quantiles, predicted vs actual, error, hints", async () => {
    const b = await root.createCaller(ctx(viewer)).analytics.deploymentBreakdown({ deploymentId });
    expect(b.deployment).toMatchObject({ id: deploymentId, endpointSlug: SLUG });
    expect(b.starts).toHaveLength(5);
    expect(b.starts[0]!.seconds).toMatchObject({ pull: 360, create: 1, load_weights: 27 });
    expect(b.starts[0]!.totalSeconds).toBe(400);
    expect(b.phaseQuantiles.find((q) => q.path === "pull" && q.phase === "pull")).toEqual({
      path: "pull",
      phase: "pull",
      samples: 3,
      p50Seconds: 380,
      p95Seconds: 380 + 0.9 * 80,
    });
    expect(b.predictedVsActual.map((p) => p.errorSeconds)).toEqual([-10, 10, 90, 1]);
    const pull = b.predictionError.find((e) => e.path === "pull")!;
    expect(pull).toMatchObject({ samples: 3, meanAbsoluteErrorSeconds: 110 / 3, biasSeconds: 30 });
    expect(b.pathMix.buckets.reduce((n, x) => n + x.counts.pull + x.counts.restore, 0)).toBe(5);
    // The latest pull moved 12.9 GB in 460 s on a 125 MiB/s disk.
    const pullHints = b.bottlenecks.find((x) => x.path === "pull")!;
    expect(pullHints.coldStartId).toBe(pullIds[2]);
    const disk = pullHints.hints.find((h) => h.phase === "pull" && h.bound === "disk_write")!;
    expect(disk.ceiling).toBe(125 * 1024 * 1024);
    expect(disk.text).toContain("disk-write bound at 125 MiB/s");
  });

  it("the endpoint list carries p50 / p95 time to ready, path mix and last cold start, per endpoint", async () => {
    const list = await root.createCaller(ctx(viewer)).endpoints.list();
    const gpt = list.find((e) => e.slug === SLUG)!;
    expect(gpt.coldStarts).toMatchObject({ samples: 4, p50Seconds: 410 });
    expect(gpt.coldStarts.lastColdStartAt?.getTime()).toBe(
      (
        await t.db.coldStart.findFirstOrThrow({ orderBy: { requestedAt: "desc" } })
      ).requestedAt.getTime(),
    );
    const other = list.find((e) => e.slug !== SLUG)!;
    expect(other.coldStarts).toMatchObject({ samples: 0, p50Seconds: null, lastColdStartAt: null });
  });

  it("a cold start carries the bottleneck hints of its phases", async () => {
    const start = await root.createCaller(ctx(viewer)).coldStarts.get({ id: pullIds[0]! });
    expect(start.bottlenecks.map((h) => `${h.phase}:${h.bound}`)).toContain("pull:disk_write");
  });

  it("another org's endpoint slug or deployment id is NOT_FOUND", async () => {
    const caller = root.createCaller(ctx(viewer));
    await expect(
      caller.analytics.endpointDetail({ endpoint: "b-private-model" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      caller.analytics.deploymentBreakdown({ deploymentId: orgBDeploymentId }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      caller.analytics.deploymentBreakdown({ deploymentId, limit: 10_000 }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  it("scaling.setReplicas: a viewer may not; an owner scales with a dashboard ScaleEvent and reconcile enqueued", async () => {
    await expect(
      root.createCaller(ctx(viewer)).scaling.setReplicas({ endpoint: SLUG, replicas: 2 }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(
      root.createCaller(ctx(owner)).scaling.setReplicas({ endpoint: SLUG, replicas: 9 }),
      // Valid input refused by the endpoint's own bounds: a stated rule, not the schema.
    ).rejects.toMatchObject({ code: "UNPROCESSABLE_CONTENT" });
    await expect(
      root
        .createCaller(ctx(owner))
        .scaling.setReplicas({ endpoint: "b-private-model", replicas: 1 }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    const result = await root
      .createCaller(ctx(owner))
      .scaling.setReplicas({ endpoint: SLUG, replicas: 2 });
    expect(result).toMatchObject({ slug: SLUG, previousReplicas: 0, desiredReplicas: 2 });
    const events = await t.db.scaleEvent.findMany({ where: { endpointId: result.endpointId } });
    expect(events).toEqual([expect.objectContaining({ source: "dashboard", desired: 2 })]);
    const detail = await root
      .createCaller(ctx(viewer))
      .analytics.endpointDetail({ endpoint: SLUG });
    expect(detail.endpoint.desiredReplicas).toBe(2);
    expect(detail.scaleEvents).toHaveLength(1);
    const queue = new Queue("reconcile", {
      connection: { url: process.env.REDIS_URL! },
      prefix: PREFIX,
    });
    try {
      expect((await queue.getJobs(["waiting"])).map((j) => j.data as unknown)).toContainEqual({
        endpointId: result.endpointId,
      });
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });

  it("signed out: UNAUTHORIZED", async () => {
    const caller = root.createCaller(ctx(null));
    await expect(caller.analytics.endpointDetail({ endpoint: SLUG })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    await expect(caller.analytics.deploymentBreakdown({ deploymentId })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    await expect(caller.scaling.setReplicas({ endpoint: SLUG, replicas: 1 })).rejects.toMatchObject(
      {
        code: "UNAUTHORIZED",
      },
    );
  });
});
