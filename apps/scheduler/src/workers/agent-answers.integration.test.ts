import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { testTlsCertificate } from "@thaw/node-agent-client/testing";
import { placeReplica, replicaReasonData, replicaReasonText } from "@thaw/core/placement";
import { DEMO_ENDPOINTS, demoDeploymentColumns, seedDemo } from "@thaw/db/seed";
import { useTestDatabase } from "@thaw/db/testing";
import { pino } from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createQueues, type SchedulerQueues } from "../queues.ts";
import { createProducerConnection } from "../redis.ts";
import { processDispatch } from "./dispatch-processor.ts";
import { processSnapshot } from "./snapshot-processor.ts";
import { processWarmPool } from "./warm-pool-processor.ts";
import { createWorkerContext, type WorkerContext } from "./worker-context.ts";
import { TEST_AGENT_CALL_KEY } from "../testing/agent-call-keys.ts";

// Issue 23, findings 4 and 9, at the scheduler. A node's agentUrl named an internal service
// (http://127.0.0.1:7499/admin/purge-cache?…); the scheduler called it with a node bearer and
// 300 characters of its answer reached the tenant as the cold start's error. Whatever answers
// at a node's address, tenants read a classified reason and the operator's log the rest.
// And a start request the agent protocol refuses (an image reference outside its grammar)
// used to fail its schema on every retry while the start stayed `scheduled`, GPU held.

const silent = pino({ level: "silent" });
const SECRET = "INTERNAL-SECRET-7f3a";

interface Answer {
  status: number;
  type: string;
  body: string;
}

/**
 * A service that is not an agent, behind the certificate its node pinned when it joined (a
 * tenant's own fake node passes every check a real one does): it remembers what it was sent
 * and answers `answer`.
 */
class InternalService {
  answer: Answer = { status: 200, type: "text/plain", body: "" };
  readonly requests: { method: string; url: string }[] = [];
  private server: Server | undefined;
  url = "";
  certSha256 = "";

  async start(): Promise<void> {
    const tls = await testTlsCertificate();
    this.certSha256 = tls.certSha256;
    this.server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      this.requests.push({ method: req.method ?? "", url: req.url ?? "" });
      req.resume();
      res.writeHead(this.answer.status, { "content-type": this.answer.type });
      res.end(this.answer.body);
    });
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", r));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

const ANSWERS: Record<string, Answer> = {
  "a JSON refusal in the protocol's shape": {
    status: 400,
    type: "application/json",
    body: JSON.stringify({
      error: { code: "cache_purged", message: `purged 1234 entries of ${SECRET}` },
    }),
  },
  "an HTML error page": {
    status: 500,
    type: "text/html",
    body: `<html><body>admin console: ${SECRET}</body></html>`,
  },
  "a 200 that is not the protocol's answer": {
    status: 200,
    type: "text/html",
    body: `<html><body>cache purged: ${SECRET}</body></html>`,
  },
  "a redirect elsewhere": {
    status: 307,
    type: "text/plain",
    body: `see http://169.254.169.254/latest/meta-data/ ${SECRET}`,
  },
};

describe("what a node's address answers, as the tenant reads it", () => {
  const testDb = useTestDatabase();
  const prefix = `test-agent-answers-${Date.now()}`;
  const service = new InternalService();
  let producer: ReturnType<typeof createProducerConnection>;
  let queues: SchedulerQueues;
  let ctx: WorkerContext;
  let seeded = 0;

  const db = () => testDb.current.db;

  beforeAll(async () => {
    producer = createProducerConnection(process.env.REDIS_URL!);
    await producer.connect();
    queues = createQueues(producer, prefix);
    await service.start();
  });
  beforeEach(() => {
    ctx = createWorkerContext({
      db: db(),
      queues,
      log: silent,
      agentCallKey: TEST_AGENT_CALL_KEY,
      snapshotStore: "snapshots.ops.thaw.test/thaw-snapshots",
    });
  });
  afterAll(async () => {
    await Promise.all(
      Object.values(queues).map((q) => q.obliterate({ force: true }).then(() => q.close())),
    );
    producer.disconnect();
    await service.stop();
  });

  /** An org whose only node's agent address is the internal service, and a pull endpoint. */
  async function seed(options: { imageRef?: string; allowedPaths?: ("pull" | "warm")[] } = {}) {
    const slug = `answers-${++seeded}`;
    const model = DEMO_ENDPOINTS.find((e) => e.gpuType === "A10G")!.deployment;
    const org = await db().org.create({ data: { slug, name: slug } });
    const node = await db().node.create({
      data: {
        orgId: org.id,
        name: `${slug}-node`,
        provider: "sim",
        runtime: "sim",
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
        agentUrl: service.url,
        agentCertSha256: service.certSha256,
      },
    });
    const endpoint = await db().endpoint.create({
      data: {
        orgId: org.id,
        slug,
        name: slug,
        gpuType: "A10G",
        allowedPaths: options.allowedPaths ?? ["pull"],
        maxReplicas: 2,
      },
    });
    // Written as a row: the API refuses such references now; rows from before may hold them.
    const deployment = await db().deployment.create({
      data: {
        orgId: org.id,
        endpointId: endpoint.id,
        version: 1,
        ...demoDeploymentColumns(model),
        ...(options.imageRef ? { imageRef: options.imageRef } : {}),
        status: "active",
      },
    });
    await db().endpoint.update({
      where: { id: endpoint.id },
      data: { activeDeploymentId: deployment.id },
    });
    return { org, node, endpoint, deployment };
  }

  /** A pending replica placed on the seeded node: its cold start, `scheduled`. */
  async function placedStart(seeded: Awaited<ReturnType<typeof seed>>) {
    const replica = await db().replica.create({
      data: {
        orgId: seeded.org.id,
        endpointId: seeded.endpoint.id,
        deploymentId: seeded.deployment.id,
        state: "pending",
      },
    });
    // Placed only (a place job would send it at once): the dispatch is the test's to run.
    await placeReplica({ db: db(), replicaId: replica.id });
    const start = await db().coldStart.findFirstOrThrow({ where: { replicaId: replica.id } });
    expect(start.status).toBe("scheduled");
    expect(await db().gpuReservation.count({ where: { replicaId: replica.id } })).toBe(1);
    await queues.place.obliterate({ force: true });
    return { replica, start };
  }

  for (const [what, answer] of Object.entries(ANSWERS))
    it(`dispatch: ${what} becomes a class and a fixed message, never the answer's text`, async () => {
      const seeded = await seed();
      const { start } = await placedStart(seeded);
      service.answer = answer;
      service.requests.length = 0;
      await processDispatch(ctx, { coldStartIds: [start.id] });

      // The path is the protocol's: the node named only where its agent is.
      expect(service.requests).toEqual([{ method: "POST", url: "/v1/replicas" }]);
      const closed = await db().coldStart.findUniqueOrThrow({ where: { id: start.id } });
      expect(closed.status).toBe("failed");
      expect(closed.error).toMatch(/^not started: agent_(refused|error) \(unknown\): [a-z' ]+$/);
      expect(closed.error).not.toContain(SECRET);
      expect(closed.error).not.toContain("cache_purged");
      const replica = await db().replica.findUniqueOrThrow({ where: { id: start.replicaId } });
      expect(replicaReasonText(replica) ?? "").not.toContain(SECRET);
      expect(replicaReasonText(replica) ?? "").not.toContain("cache_purged");
      expect(JSON.stringify(replica.reasonDetail)).not.toContain(SECRET);
    });

  it("park: the reason a tenant reads is a class, not the answer", async () => {
    const seeded = await seed({ allowedPaths: ["pull", "warm"] });
    const replica = await db().replica.create({
      data: {
        orgId: seeded.org.id,
        endpointId: seeded.endpoint.id,
        deploymentId: seeded.deployment.id,
        nodeId: seeded.node.id,
        state: "draining",
        ...replicaReasonData({ drainIntent: "park_candidate" }),
        readyAt: new Date(),
      },
    });
    await db().gpuReservation.create({
      data: { nodeId: seeded.node.id, gpuIndex: 0, replicaId: replica.id },
    });
    service.answer = ANSWERS["a JSON refusal in the protocol's shape"]!;
    service.requests.length = 0;
    await processWarmPool(
      { ...ctx, warmPool: { gpuBudget: 2, settings: { fixedKeepAliveSeconds: 600 } } },
      { endpointId: seeded.endpoint.id },
    );
    expect(service.requests).toEqual([{ method: "POST", url: `/v1/replicas/${replica.id}/park` }]);
    const after = await db().replica.findUniqueOrThrow({ where: { id: replica.id } });
    expect(after.drainIntent).toBe("park_refused");
    expect(replicaReasonText(after)).toMatch(
      /^warm pool: park refused: agent_refused \(unknown\): /,
    );
    expect(replicaReasonText(after)).not.toContain(SECRET);
    expect(replicaReasonText(after)).not.toContain("cache_purged");
    expect(JSON.stringify(after.reasonDetail)).not.toContain(SECRET);
  });

  it("snapshot capture: the recorded reason is a class, not the answer", async () => {
    const { orgId } = await seedDemo(db());
    const endpoint = await db().endpoint.findFirstOrThrow({
      where: { orgId, slug: "llama-3-2-3b-instruct" },
    });
    const node = await db().node.create({
      data: {
        orgId,
        name: "capture-source",
        provider: "sim",
        runtime: "sim",
        instanceType: "g5.xlarge",
        gpuModel: "A10G",
        gpuCount: 1,
        vcpus: 4,
        networkGbps: 10,
        diskReadMiBps: 125,
        diskWriteMiBps: 125,
        pcieGBps: 25,
        driverVersion: "570.133.20",
        cudaVersion: "12.8",
        state: "ready",
        agentUrl: service.url,
        agentCertSha256: service.certSha256,
      },
    });
    const replica = await db().replica.create({
      data: {
        orgId,
        endpointId: endpoint.id,
        deploymentId: endpoint.activeDeploymentId!,
        nodeId: node.id,
        state: "ready",
        readyAt: new Date(),
      },
    });
    await db().gpuReservation.create({
      data: { nodeId: node.id, gpuIndex: 0, replicaId: replica.id },
    });
    await db().coldStart.create({
      data: {
        orgId,
        endpointId: endpoint.id,
        deploymentId: endpoint.activeDeploymentId!,
        replicaId: replica.id,
        nodeId: node.id,
        path: "pull",
        locality: "cold",
        predictedSeconds: 300,
        status: "succeeded",
        actualSeconds: 300,
      },
    });
    service.answer = ANSWERS["an HTML error page"]!;
    service.requests.length = 0;
    const result = (await processSnapshot(ctx, {
      deploymentId: endpoint.activeDeploymentId!,
    })) as { kind: string; snapshotId: string };
    expect(result.kind).toBe("failed");
    expect(service.requests).toEqual([{ method: "POST", url: "/v1/snapshots" }]);
    const snapshot = await db().snapshot.findUniqueOrThrow({ where: { id: result.snapshotId } });
    expect(snapshot.error).toMatch(/^agent_error \(unknown\): /);
    expect(snapshot.error).not.toContain(SECRET);
  });

  it("a start the protocol refuses fails at once with that reason, frees its GPU, and is not retried", async () => {
    for (const imageRef of ["-k/foo", "--privileged/x", ".x.com/foo", "[2001:db8::1]:5000/foo"]) {
      const seeded = await seed({ imageRef });
      const { replica, start } = await placedStart(seeded);
      service.requests.length = 0;
      // Once, as BullMQ would run it first: nothing is thrown for a retry.
      await expect(
        processDispatch(
          ctx,
          { coldStartIds: [start.id] },
          { attemptsMade: 0, opts: { attempts: 30 } },
        ),
      ).resolves.toMatchObject({ failed: 1 });

      expect(service.requests, imageRef).toEqual([]);
      const closed = await db().coldStart.findUniqueOrThrow({ where: { id: start.id } });
      expect(closed.status, imageRef).toBe("failed");
      expect(closed.error, imageRef).toMatch(/^not started: image_refused: deployment\.imageRef: /);
      expect(await db().gpuReservation.count({ where: { replicaId: replica.id } })).toBe(0);
      // Every option would be refused alike: the replica is given up, not placed again.
      const given = await db().replica.findUniqueOrThrow({ where: { id: replica.id } });
      expect(given.state, imageRef).toBe("failed");
      expect(given.nodeId).toBeNull();
      expect(given.pendingCause, imageRef).toBe("start_refused");
      expect(replicaReasonText(given), imageRef).toMatch(/image_refused/);
      const placeJobs = await queues.place.getJobs(["waiting", "prioritized", "delayed"]);
      expect(placeJobs.map((j) => (j.data as { replicaId: string }).replicaId)).not.toContain(
        replica.id,
      );
      expect(await db().coldStart.count({ where: { replicaId: replica.id } })).toBe(1);
    }
  });
});
