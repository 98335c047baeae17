import { DEMO_ENDPOINTS, demoDeploymentColumns } from "@thaw/db/seed";
import { useTestDatabase } from "@thaw/db/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { placeJobHeads } from "@thaw/core";
import {
  startAgentStandIn,
  type AgentStandIn,
  type StandInStart,
} from "@thaw/node-agent-client/testing";
import { createQueues, enqueue, enqueueMany, type SchedulerQueues } from "../queues.ts";
import { createProducerConnection } from "../redis.ts";
import { processPlace } from "./place-processor.ts";
import { createWorkerContext } from "./worker-context.ts";
import { TEST_AGENT_CALL_KEY } from "../testing/agent-call-keys.ts";

// A place job decides for its replica and a batch of the deployment's other pending replicas.
// Whatever becomes of its own replica, every start the batch committed must be sent to its
// agent (from the job itself, since no dispatch job lies between): left behind, they would
// wait for the periodic sweep (seen in bench:placement as 13 starts that never reached their
// agent).

const silent = pino({ level: "silent" });

describe("place job", () => {
  const testDb = useTestDatabase();
  const prefix = `test-place-${Date.now()}`;
  let producer: ReturnType<typeof createProducerConnection>;
  let queues: SchedulerQueues;
  let agent: AgentStandIn;
  const received: StandInStart[] = [];

  beforeAll(async () => {
    producer = createProducerConnection(process.env.REDIS_URL!);
    await producer.connect();
    queues = createQueues(producer, prefix);
    agent = await startAgentStandIn((start) => received.push(start));
  });

  afterAll(async () => {
    agent.close();
    await Promise.all(
      Object.values(queues).map((q) => q.obliterate({ force: true }).then(() => q.close())),
    );
    producer.disconnect();
  });

  /** An org with `nodes` ready A10G nodes of `gpus` GPUs, and one pull-only endpoint. */
  async function seed(slug: string, nodes: number, gpus: number) {
    const db = testDb.current.db;
    const model = DEMO_ENDPOINTS.find((e) => e.gpuType === "A10G")!.deployment;
    const org = await db.org.create({ data: { slug, name: slug } });
    await db.node.createMany({
      data: Array.from({ length: nodes }, (_, i) => ({
        orgId: org.id,
        name: `${slug}-node-${i}`,
        provider: "sim" as const,
        runtime: "sim" as const,
        instanceType: "g5.12xlarge",
        gpuModel: "A10G",
        gpuCount: gpus,
        vcpus: 48,
        networkGbps: 40,
        diskReadMiBps: 1_000,
        diskWriteMiBps: 1_000,
        pcieGBps: 12,
        state: "ready" as const,
        lastHeartbeatAt: new Date(),
        agentUrl: `${agent.url}/hosts/${slug}-${i}`,
        agentCertSha256: agent.certSha256,
      })),
    });
    const endpoint = await db.endpoint.create({
      data: { orgId: org.id, slug, name: slug, gpuType: "A10G", allowedPaths: ["pull"] },
    });
    const deployment = await db.deployment.create({
      data: {
        orgId: org.id,
        endpointId: endpoint.id,
        version: 1,
        ...demoDeploymentColumns(model),
        status: "active",
      },
    });
    await db.endpoint.update({
      where: { id: endpoint.id },
      data: { activeDeploymentId: deployment.id },
    });
    const node = await db.node.findFirstOrThrow({ where: { orgId: org.id } });
    return { db, org, node, endpoint, deployment };
  }

  it("dispatches the batch's placed starts when its own replica finds no option", async () => {
    const { db, org, node, endpoint, deployment } = await seed("place-batch", 1, 2);
    const replica = (createdAt: Date) =>
      db.replica.create({
        data: {
          orgId: org.id,
          endpointId: endpoint.id,
          deploymentId: deployment.id,
          state: "pending",
          createdAt,
        },
      });
    // The job's own replica already failed a pull on the only node: it has no option left.
    const own = await replica(new Date(Date.now() - 2_000));
    const other = await replica(new Date(Date.now() - 1_000));
    await db.coldStart.create({
      data: {
        orgId: org.id,
        endpointId: endpoint.id,
        deploymentId: deployment.id,
        replicaId: own.id,
        nodeId: node.id,
        path: "pull",
        locality: "cold",
        predictedSeconds: 100,
        status: "failed",
      },
    });

    const ctx = createWorkerContext({
      db,
      queues,
      log: silent,
      agentCallKey: TEST_AGENT_CALL_KEY,
    });
    const result = (await processPlace(ctx, { replicaId: own.id })) as {
      kind: string;
      placed: { replicaId: string; coldStartId: string }[];
    };

    expect(result.kind).toBe("unplaceable");
    expect(result.placed.map((p) => p.replicaId)).toEqual([other.id]);
    // Sent by the job itself: the agent has it, and no dispatch job was left to do it.
    expect(received.filter((r) => r.replicaId === other.id).map((r) => r.coldStartId)).toEqual([
      result.placed[0]!.coldStartId,
    ]);
    expect((await db.replica.findUniqueOrThrow({ where: { id: other.id } })).state).toBe(
      "starting",
    );
    expect(await queues.dispatch.getJobs(["waiting", "prioritized", "delayed"])).toEqual([]);
  });

  it("hands a start whose agent did not answer to a dispatch job, which retries it", async () => {
    const { db, org, node, endpoint, deployment } = await seed("place-unanswered", 1, 1);
    // Nothing listens on port 9 (discard): connection refused, a retryable error.
    await db.node.update({ where: { id: node.id }, data: { agentUrl: "https://127.0.0.1:9" } });
    await queues.dispatch.obliterate({ force: true });
    const replica = await db.replica.create({
      data: {
        orgId: org.id,
        endpointId: endpoint.id,
        deploymentId: deployment.id,
        state: "pending",
      },
    });
    const ctx = createWorkerContext({
      db,
      queues,
      log: silent,
      agentCallKey: TEST_AGENT_CALL_KEY,
    });
    const result = (await processPlace(ctx, { replicaId: replica.id })) as {
      placed: { coldStartId: string }[];
    };

    expect(result.placed).toHaveLength(1);
    const start = await db.coldStart.findUniqueOrThrow({
      where: { id: result.placed[0]!.coldStartId },
    });
    expect(start.status).toBe("scheduled");
    const dispatches = await queues.dispatch.getJobs(["waiting", "prioritized", "delayed"]);
    expect(dispatches.map((j) => (j.data as { coldStartIds: string[] }).coldStartIds)).toEqual([
      [start.id],
    ]);
  });

  it("enqueueMany adds each job once, deduplicated on its entity like enqueue", async () => {
    await queues.place.obliterate({ force: true });
    const ids = ["01a2099b-4121-7004-8b46-5beef1b673fc", "01a2099b-4123-7001-b214-c347d4120390"];
    await enqueue(queues, "place", { replicaId: ids[0]! });
    await enqueueMany(queues, "place", [
      { replicaId: ids[0]! },
      { replicaId: ids[1]! },
      { replicaId: ids[1]! },
    ]);
    const jobs = await queues.place.getJobs(["waiting", "prioritized", "delayed"]);
    expect(jobs.map((j) => (j.data as { replicaId: string }).replicaId).sort()).toEqual(ids);
    await expect(enqueueMany(queues, "place", [{ replicaId: "not-a-uuid" }])).rejects.toThrow();
  });

  it("places a whole scale-up from one job per batch, whichever job runs first", async () => {
    const { db, org, endpoint, deployment } = await seed("place-heads", 40, 4);
    await queues.place.obliterate({ force: true });
    await queues.dispatch.obliterate({ force: true });
    const base = Date.now() - 60_000;
    await db.replica.createMany({
      data: Array.from({ length: 70 }, (_, i) => ({
        orgId: org.id,
        endpointId: endpoint.id,
        deploymentId: deployment.id,
        state: "pending" as const,
        createdAt: new Date(base + i),
      })),
    });
    const pending = await db.replica.findMany({
      where: { endpointId: endpoint.id, state: "pending" },
      orderBy: { createdAt: "asc" },
    });
    const heads = placeJobHeads(pending);
    expect(heads).toHaveLength(3);
    await enqueueMany(
      queues,
      "place",
      heads.map((replicaId) => ({ replicaId })),
    );
    const ctx = createWorkerContext({
      db,
      queues,
      log: silent,
      agentCallKey: TEST_AGENT_CALL_KEY,
    });
    // Drain the place queue, newest job first: the last head runs first and takes the
    // oldest pending replicas, so the others find theirs taken and place the next ones.
    let jobs = 0;
    for (;;) {
      const waiting = await queues.place.getJobs(["waiting", "prioritized"]);
      const job = waiting.sort((a, b) => Number(b.id) - Number(a.id))[0];
      if (!job) break;
      await job.remove();
      await processPlace(ctx, job.data);
      jobs++;
      expect(jobs).toBeLessThan(20);
    }
    expect(await db.replica.count({ where: { endpointId: endpoint.id, state: "pending" } })).toBe(
      0,
    );
    expect(await db.coldStart.count({ where: { endpointId: endpoint.id } })).toBe(70);
    // Every start sent to its agent exactly once, by the job that placed it.
    const coldStarts = await db.coldStart.findMany({
      where: { endpointId: endpoint.id },
      select: { id: true, status: true },
    });
    const sent = received.filter((r) => r.deploymentId === deployment.id).map((r) => r.coldStartId);
    expect(sent.toSorted()).toEqual(coldStarts.map((c) => c.id).toSorted());
    expect(new Set(coldStarts.map((c) => c.status))).toEqual(new Set(["dispatched"]));
    expect(await queues.dispatch.getJobs(["waiting", "prioritized", "delayed"])).toEqual([]);
    // Never more than a node's GPUs.
    const perNode = await db.gpuReservation.groupBy({ by: ["nodeId"], _count: true });
    expect(Math.max(...perNode.map((n) => n._count))).toBeLessThanOrEqual(4);
  });
});
