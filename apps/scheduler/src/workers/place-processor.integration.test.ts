import { DEMO_ENDPOINTS } from "@thaw/db/seed";
import { useTestDatabase } from "@thaw/db/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueues, enqueue, enqueueMany, type SchedulerQueues } from "../queues.ts";
import { createProducerConnection } from "../redis.ts";
import { processPlace } from "./place-processor.ts";
import { createWorkerContext } from "./worker-context.ts";

// A place job decides for its replica and a batch of the deployment's other pending replicas.
// Whatever becomes of its own replica, every start the batch committed must be dispatched:
// left behind, they would wait for the periodic sweep (seen in bench:placement as 13 starts
// that never reached their agent).

const silent = pino({ level: "silent" });

describe("place job", () => {
  const testDb = useTestDatabase();
  const prefix = `test-place-${Date.now()}`;
  let producer: ReturnType<typeof createProducerConnection>;
  let queues: SchedulerQueues;

  beforeAll(async () => {
    producer = createProducerConnection(process.env.REDIS_URL!);
    await producer.connect();
    queues = createQueues(producer, prefix);
  });

  afterAll(async () => {
    await Promise.all(
      Object.values(queues).map((q) => q.obliterate({ force: true }).then(() => q.close())),
    );
    producer.disconnect();
  });

  it("dispatches the batch's placed starts when its own replica finds no option", async () => {
    const db = testDb.current.db;
    const model = DEMO_ENDPOINTS.find((e) => e.gpuType === "A10G")!.deployment;
    const org = await db.org.create({ data: { slug: "place-batch", name: "place batch" } });
    const node = await db.node.create({
      data: {
        orgId: org.id,
        name: "only-node",
        provider: "sim",
        runtime: "sim",
        instanceType: "g5.12xlarge",
        gpuModel: "A10G",
        gpuCount: 2,
        vcpus: 48,
        networkGbps: 40,
        diskReadMiBps: 1_000,
        diskWriteMiBps: 1_000,
        pcieGBps: 12,
        state: "ready",
        lastHeartbeatAt: new Date(),
        agentUrl: "http://127.0.0.1:9/agent",
      },
    });
    const endpoint = await db.endpoint.create({
      data: {
        orgId: org.id,
        slug: "batch",
        name: "batch",
        gpuType: "A10G",
        allowedPaths: ["pull"],
        desiredReplicas: 2,
      },
    });
    const deployment = await db.deployment.create({
      data: {
        orgId: org.id,
        endpointId: endpoint.id,
        version: 1,
        imageRef: model.imageRef,
        imageDigest: model.imageDigest,
        imageBytes: BigInt(model.imageLayers.reduce((s, l) => s + l.bytes, 0)),
        imageLayers: model.imageLayers,
        modelSource: model.modelSource,
        modelBytes: BigInt(model.modelBytes),
        modelFormat: model.modelFormat,
        engine: model.engine,
        engineProfile: model.engineProfile,
        status: "active",
      },
    });
    await db.endpoint.update({
      where: { id: endpoint.id },
      data: { activeDeploymentId: deployment.id },
    });
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
      nodeCredentialSecret: "place-test-node-credential-secret-0123456",
    });
    const result = (await processPlace(ctx, { replicaId: own.id })) as {
      kind: string;
      placed: { replicaId: string; coldStartId: string }[];
    };

    expect(result.kind).toBe("unplaceable");
    expect(result.placed.map((p) => p.replicaId)).toEqual([other.id]);
    expect((await db.replica.findUniqueOrThrow({ where: { id: other.id } })).state).toBe("placed");
    const dispatches = await queues.dispatch.getJobs(["waiting", "prioritized", "delayed"]);
    expect(dispatches.map((j) => (j.data as { coldStartId: string }).coldStartId)).toEqual([
      result.placed[0]!.coldStartId,
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
});
