import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { sealSecret } from "@thaw/core";
import { DEMO_ENDPOINTS, demoDeploymentColumns } from "@thaw/db/seed";
import { useTestDatabase } from "@thaw/db/testing";
import { testTlsCertificate } from "@thaw/node-agent-client/testing";
import { pino } from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createQueues, type SchedulerQueues } from "../queues.ts";
import { createProducerConnection } from "../redis.ts";
import { TEST_AGENT_CALL_KEY } from "../testing/agent-call-keys.ts";
import { processPlace } from "./place-processor.ts";
import { createWorkerContext, type WorkerContext } from "./worker-context.ts";

// Issue 19: dispatch opens the org's stored registry credential for the start's image and
// hands it to the agent in the signed request; the queue's jobs carry ids only.

const silent = pino({ level: "silent" });
const REGISTRY = "registry.example.com";
const PASSWORD = "dispatch-secret-51b0";

/** An agent that accepts every start and remembers the bodies it was sent. */
class RecordingAgent {
  readonly bodies: Record<string, unknown>[] = [];
  private server: Server | undefined;
  url = "";
  certSha256 = "";

  async start(): Promise<void> {
    const tls = await testTlsCertificate();
    this.certSha256 = tls.certSha256;
    this.server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
        this.bodies.push(body);
        res.writeHead(202, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            replicaId: body.replicaId,
            coldStartId: body.coldStartId,
            path: body.path,
            acceptedAt: new Date().toISOString(),
          }),
        );
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", r));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

describe("dispatch hands the org's registry credential to the agent", () => {
  const testDb = useTestDatabase();
  const prefix = `test-dispatch-auth-${Date.now()}`;
  const agent = new RecordingAgent();
  const sealingKey = randomBytes(32);
  let producer: ReturnType<typeof createProducerConnection>;
  let queues: SchedulerQueues;
  let ctx: WorkerContext;
  let seeded = 0;
  const db = () => testDb.current.db;

  beforeAll(async () => {
    producer = createProducerConnection(process.env.REDIS_URL!);
    await producer.connect();
    queues = createQueues(producer, prefix);
    await agent.start();
  });
  beforeEach(() => {
    ctx = createWorkerContext({
      db: db(),
      queues,
      log: silent,
      agentCallKey: TEST_AGENT_CALL_KEY,
      registryCredentials: { sealingKey },
    });
  });
  afterAll(async () => {
    await Promise.all(
      Object.values(queues).map((q) => q.obliterate({ force: true }).then(() => q.close())),
    );
    producer.disconnect();
    await agent.stop();
  });

  async function placedStart(options: { credential: boolean }) {
    const slug = `auth-${++seeded}`;
    const model = DEMO_ENDPOINTS.find((e) => e.gpuType === "A10G")!.deployment;
    const org = await db().org.create({ data: { slug, name: slug } });
    await db().node.create({
      data: {
        orgId: org.id,
        name: `${slug}-node`,
        provider: "sim",
        runtime: "containerd",
        instanceType: "g5.xlarge",
        gpuModel: "A10G",
        gpuCount: 1,
        vcpus: 4,
        networkGbps: 10,
        diskReadMiBps: 1_000,
        diskWriteMiBps: 1_000,
        pcieGBps: 12,
        state: "ready",
        lastHeartbeatAt: new Date(),
        agentUrl: agent.url,
        agentCertSha256: agent.certSha256,
      },
    });
    const endpoint = await db().endpoint.create({
      data: {
        orgId: org.id,
        slug,
        name: slug,
        gpuType: "A10G",
        allowedPaths: ["pull"],
        maxReplicas: 2,
      },
    });
    const deployment = await db().deployment.create({
      data: {
        orgId: org.id,
        endpointId: endpoint.id,
        version: 1,
        ...demoDeploymentColumns(model),
        imageRef: `${REGISTRY}/team/llama:v1`,
        estargzImageRef: null,
        estargzDigest: null,
        status: "active",
      },
    });
    await db().endpoint.update({
      where: { id: endpoint.id },
      data: { activeDeploymentId: deployment.id },
    });
    if (options.credential) {
      await db().registryCredential.create({
        data: {
          orgId: org.id,
          registry: REGISTRY,
          kind: "basic",
          username: "robot",
          // core's credentialBinding: sealed for this org and registry only.
          sealedSecret: sealSecret(
            PASSWORD,
            sealingKey,
            `registry-credential:${org.id}:${REGISTRY}`,
          ),
        },
      });
    }
    const replica = await db().replica.create({
      data: {
        orgId: org.id,
        endpointId: endpoint.id,
        deploymentId: deployment.id,
        state: "pending",
      },
    });
    // The place job sends the start itself once it commits.
    agent.bodies.length = 0;
    await processPlace(ctx, { replicaId: replica.id });
    return db().coldStart.findFirstOrThrow({ where: { replicaId: replica.id } });
  }

  it("puts the credential in the start request only, never in a job", async () => {
    const start = await placedStart({ credential: true });
    expect(start.status).toBe("dispatched");
    const jobs = [
      ...(await queues.place.getJobs(["waiting", "prioritized", "delayed"])),
      ...(await queues.dispatch.getJobs(["waiting", "prioritized", "delayed"])),
    ];
    expect(JSON.stringify(jobs.map((j): unknown => j.data))).not.toContain(PASSWORD);
    expect(agent.bodies).toHaveLength(1);
    expect(agent.bodies[0]?.registryAuth).toEqual([
      { registry: REGISTRY, username: "robot", password: PASSWORD },
    ]);
    const row = await db().coldStart.findUniqueOrThrow({ where: { id: start.id } });
    expect(JSON.stringify(row)).not.toContain(PASSWORD);
    await queues.place.obliterate({ force: true });
    await queues.dispatch.obliterate({ force: true });
  });

  it("sends no registryAuth when the org has no credential for the image's registry", async () => {
    const start = await placedStart({ credential: false });
    expect(start.status).toBe("dispatched");
    expect(agent.bodies).toHaveLength(1);
    expect(agent.bodies[0]).not.toHaveProperty("registryAuth");
    await queues.place.obliterate({ force: true });
    await queues.dispatch.obliterate({ force: true });
  });
});
