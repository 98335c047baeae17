import { writeFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seedDemo } from "@thaw/db/seed";
import { useTestDatabase } from "@thaw/db/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadEnv } from "../env.ts";
import { createQueues, enqueue, type SchedulerQueues } from "../queues.ts";
import { createProducerConnection } from "../redis.ts";
import { startScheduler, type RunningScheduler } from "../scheduler.ts";
import { startAgentApiServer, type AgentApiServer } from "../testing/agent-api-server.ts";
import { freePort } from "../testing/moto-server.ts";
import { startSimAgent, type SimAgentProcess } from "../testing/sim-agent-process.ts";
import { TEST_AGENT_CALL_KEYS } from "../testing/agent-call-keys.ts";
import { keepAliveFetch } from "@thaw/node-agent-client";

// The fleet worker with the `sim` provider, end to end: no host at all, replicas wanted →
// hosts launched in the sim cloud of a real agent process, booted, joined, placed on; then
// scaled to zero → the idle hosts retired after the cool-down and terminated in the cloud.

const CLOUD_TOKEN = "fleet-test-sim-cloud-token";
const silent = pino({ level: "silent" });

describe("fleet worker with the sim provider", () => {
  const testDb = useTestDatabase();
  const prefix = `test-fleet-${Date.now()}`;
  let api: AgentApiServer;
  let agent: SimAgentProcess;
  let scheduler: RunningScheduler;
  let producer: ReturnType<typeof createProducerConnection>;
  let queues: SchedulerQueues;
  let endpointId: string;
  let orgId: string;
  let cloudUrl: string;
  let cloudCertSha256: string | undefined;
  // The sim cloud is the sim agent's: over its TLS, pinned to its certificate.
  const pinned = keepAliveFetch();
  const cloudFetch = (url: string, init: RequestInit = {}) =>
    pinned(url, { ...init, certSha256: cloudCertSha256 });

  const db = () => testDb.current.db;
  const cloud = async () =>
    (
      (await (
        await cloudFetch(`${cloudUrl}/sim-cloud/v1/instances`, {
          headers: { authorization: `Bearer ${CLOUD_TOKEN}` },
        })
      ).json()) as { instances: { instanceId: string; state: string }[] }
    ).instances;

  beforeAll(async () => {
    ({ orgId } = await seedDemo(db()));
    endpointId = (
      await db().endpoint.findFirstOrThrow({ where: { orgId, slug: "llama-3-2-1b-gguf" } })
    ).id;
    producer = createProducerConnection(process.env.REDIS_URL!);
    await producer.connect();
    queues = createQueues(producer, prefix);
    api = await startAgentApiServer({ db: db() });
    const port = await freePort();
    cloudUrl = `https://127.0.0.1:${port}`;
    agent = startSimAgent({
      controlPlaneUrl: api.url,
      joinTokens: [],
      hosts: "",
      prefix: "fl",
      // 90 simulated seconds of boot take 45 ms.
      env: {
        THAW_SIM_TIME_FACTOR: "2000",
        THAW_SIM_CLOUD_TOKEN: CLOUD_TOKEN,
        THAW_AGENT_LISTEN: `127.0.0.1:${port}`,
      },
    });
    for (
      let waited = 0;
      !(cloudCertSha256 ??= agent.certSha256()) ||
      !(await cloudFetch(`${cloudUrl}/healthz`).then(
        (r) => r.ok,
        () => false,
      ));
      waited += 100
    ) {
      if (waited > 30_000) throw new Error(`the sim agent did not start\n${agent.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const dir = mkdtempSync(join(tmpdir(), "thaw-fleet-"));
    writeFileSync(
      join(dir, "fleet.json"),
      JSON.stringify({
        provider: "sim",
        offerings: [{ instanceType: "g5.xlarge", zone: "sim-a", priceUsdPerHour: 1.006 }],
        idleCooldownSeconds: 2,
        pendingGraceSeconds: 1,
        launchGraceSeconds: 120,
        bootSeconds: 90,
        sim: { cloudUrl, cloudCertSha256 },
      }),
    );
    scheduler = await startScheduler(
      loadEnv({
        DATABASE_URL: testDb.current.url,
        REDIS_URL: process.env.REDIS_URL,
        THAW_QUEUE_PREFIX: prefix,
        THAW_AGENT_CALL_KEY: TEST_AGENT_CALL_KEYS.privateKey,
        THAW_FLEET_CONFIG: join(dir, "fleet.json"),
        THAW_SIM_CLOUD_TOKEN: CLOUD_TOKEN,
        LOG_LEVEL: "error",
      }),
      silent,
      { sweepMs: 1_000 },
    );
  }, 60_000);

  afterAll(async () => {
    await scheduler?.stop();
    await agent?.stop();
    await api?.close();
    await Promise.all(Object.values(queues ?? {}).map((q) => q.close()));
    producer?.disconnect();
  });

  it("grows from no host to one per wanted GPU, and the waiting starts show the provision phase", async () => {
    expect(await db().node.count()).toBe(0);
    await db().endpoint.update({ where: { id: endpointId }, data: { desiredReplicas: 2 } });
    await enqueue(queues, "reconcile", { endpointId });

    await expect
      .poll(() => db().replica.count({ where: { endpointId, state: "ready" } }), {
        timeout: 45_000,
      })
      .toBe(2);
    const nodes = await db().node.findMany();
    expect(nodes).toHaveLength(2); // g5.xlarge: one A10G each, one replica each
    for (const node of nodes) {
      expect(node).toMatchObject({
        provisioned: true,
        provider: "sim",
        state: "ready",
        instanceType: "g5.xlarge",
        zone: "sim-a",
        instanceId: `sim-${node.id}`,
        // The volume the provider provisioned, and what the host reports of it.
        volumeThroughputMiBps: 1_000,
        volumeIops: 16_000,
        measuredDiskReadMiBps: 1_000,
        measuredDiskWriteMiBps: 1_000,
      });
      expect(node.diskMeasuredAt).not.toBeNull();
    }
    expect((await cloud()).map((i) => i.state)).toEqual(["running", "running"]);

    const starts = await db().coldStart.findMany({
      where: { endpointId, status: "succeeded" },
      include: { phases: { orderBy: { sequence: "asc" } } },
    });
    expect(starts).toHaveLength(2);
    for (const start of starts) {
      const [first, ...rest] = start.phases;
      expect(first).toMatchObject({ sequence: 0, phase: "provision" });
      expect(first!.seconds).toBeGreaterThan(0);
      expect(rest.map((e) => e.phase)).toContain("ready");
    }
    const audit = await db().auditLog.findMany({ where: { action: "node.launch_requested" } });
    expect(audit).toHaveLength(2);
  });

  it("retires the idle hosts after the cool-down and terminates them in the cloud", async () => {
    await db().endpoint.update({ where: { id: endpointId }, data: { desiredReplicas: 0 } });
    await enqueue(queues, "reconcile", { endpointId });
    await expect
      .poll(() => db().node.count({ where: { state: "terminated" } }), { timeout: 45_000 })
      .toBe(2);
    expect(await cloud()).toEqual([]);
    const nodes = await db().node.findMany();
    for (const node of nodes) expect(node.stateReason).toMatch(/^retired: idle for \d+ s/);
    expect(await db().auditLog.count({ where: { action: "node.retired" } })).toBe(2);
  });

  it("collects a cloud instance with no node row", async () => {
    const stray = await cloudFetch(`${cloudUrl}/sim-cloud/v1/instances`, {
      method: "POST",
      headers: { authorization: `Bearer ${CLOUD_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({
        instanceId: "sim-00000000-0000-7000-8000-00000000dead",
        instanceType: "g5.xlarge",
        zone: "sim-a",
        joinToken: "thawjoin_none",
        bootSeconds: 0,
      }),
    });
    expect(stray.status).toBe(201);
    await expect.poll(async () => (await cloud()).length, { timeout: 20_000 }).toBe(0);
  });
});
