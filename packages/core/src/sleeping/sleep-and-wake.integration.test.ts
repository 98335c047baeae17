import { Prisma, prismaRows } from "@thaw/db";
import { DEMO_ENDPOINTS, demoDeploymentColumns } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSchedulingNodes } from "../placement/load-placement-state.ts";
import { placeReplica } from "../placement/place-replica.ts";
import { prepareDispatch } from "../placement/prepare-dispatch.ts";
import { tendWarmPool } from "../warm-pool/tend-warm-pool.ts";
import { sleepingEngineBytes } from "./choose-sleep-level.ts";
import { finishReplicaSleep } from "./finish-replica-sleep.ts";

// A replica the warm pool lets go sleeps on its node (its GPUs given back, its GPU time closed),
// and the next start of its deployment wakes it on those GPUs — once nobody else holds them.

describe("a sleeping replica, from the warm pool's release to its wake", () => {
  let t: TestDatabase;
  let orgId: string;
  let nodeId: string;
  let endpointId: string;
  let deploymentId: string;

  beforeAll(async () => {
    t = await createTestDatabase();
    const org = await t.db.org.create({ data: { slug: "sleepers", name: "Sleepers" } });
    orgId = org.id;
    const node = await t.db.node.create({
      data: {
        orgId,
        name: "sleepy-node",
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
        memoryBytes: 64n * 2n ** 30n,
        state: "ready",
        lastHeartbeatAt: new Date(),
        agentUrl: "http://127.0.0.1:9/agent",
      },
    });
    nodeId = node.id;
    // Llama 3.2 3B on vLLM (an engine that can sleep): 6.4 GB of weights.
    const model = DEMO_ENDPOINTS.find(
      (e) => e.gpuType === "A10G" && e.deployment.engine === "vllm",
    )!.deployment;
    const endpoint = await t.db.endpoint.create({
      data: { orgId, slug: "sleepy", name: "Sleepy", gpuType: "A10G", maxReplicas: 2 },
    });
    endpointId = endpoint.id;
    const deployment = await t.db.deployment.create({
      data: {
        orgId,
        endpointId,
        version: 1,
        ...demoDeploymentColumns(model),
        status: "active",
      },
    });
    deploymentId = deployment.id;
    await t.db.endpoint.update({
      where: { id: endpointId },
      data: { activeDeploymentId: deploymentId },
    });
  });
  afterAll(async () => {
    await t.drop();
  });

  const nodes = () =>
    loadSchedulingNodes(prismaRows(t.db), orgId, "A10G", {
      deploymentId,
      imageDigests: [],
      gpus: 1,
    });

  /** Every replica of the endpoint gone and the node's GPUs free, with this much memory. */
  async function emptyNode(memoryGiB: bigint) {
    await t.db.gpuReservation.deleteMany({ where: { nodeId } });
    await t.db.replica.updateMany({ where: { endpointId }, data: { state: "stopped" } });
    await t.db.node.update({ where: { id: nodeId }, data: { memoryBytes: memoryGiB * 2n ** 30n } });
  }

  /** A replica that served, was parked, and whose keep-alive is over: handed to the agent to sleep. */
  async function sleepCandidate() {
    const replica = await t.db.replica.create({
      data: {
        orgId,
        endpointId,
        deploymentId,
        nodeId,
        state: "draining",
        drainIntent: "sleep_candidate",
      },
    });
    await t.db.gpuReservation.create({ data: { nodeId, gpuIndex: 0, replicaId: replica.id } });
    return replica.id;
  }

  it("the warm pool sends a warm replica it releases to sleep, with the engine's calls", async () => {
    // Waiting is worth nothing here: the plan keeps no replica warm.
    await t.db.endpoint.update({ where: { id: endpointId }, data: { gpuSecondsPerWaitSecond: 0 } });
    const warm = await t.db.replica.create({
      data: { orgId, endpointId, deploymentId, nodeId, state: "warm" },
    });
    await t.db.gpuReservation.create({ data: { nodeId, gpuIndex: 0, replicaId: warm.id } });
    const result = await tendWarmPool({ db: t.db, endpointId, options: { gpuBudget: 4 } });
    expect(result.toStop).toEqual([]);
    const { modelBytes } = await t.db.deployment.findUniqueOrThrow({ where: { id: deploymentId } });
    expect(result.toSleep).toEqual([
      {
        replicaId: warm.id,
        nodeId,
        // 64 GiB holds the 6.4 GB of weights beside a serving engine: level 1.
        sleepLevel: 1,
        sleepingBytes: sleepingEngineBytes(Number(modelBytes), 1),
        engineSleep: { path: "/sleep?level=1" },
        engineWake: { path: "/wake_up" },
      },
    ]);
    expect(await t.db.replica.findUniqueOrThrow({ where: { id: warm.id } })).toMatchObject({
      state: "draining",
      drainIntent: "sleep_candidate",
    });
    await t.db.replica.update({ where: { id: warm.id }, data: { state: "stopped" } });
    await t.db.gpuReservation.deleteMany({ where: { replicaId: warm.id } });
  });

  it("sleeps: no GPU held, the GPUs it slept on and its memory kept, its GPU time closed", async () => {
    const sleeperId = await sleepCandidate();
    expect(
      await finishReplicaSleep({
        db: t.db,
        replicaId: sleeperId,
        sleepLevel: 1,
        sleepingBytes: 9e9,
      }),
    ).toBe(true);
    // Idempotent: a resent finish changes nothing.
    expect(
      await finishReplicaSleep({
        db: t.db,
        replicaId: sleeperId,
        sleepLevel: 1,
        sleepingBytes: 9e9,
      }),
    ).toBe(false);
    const row = await t.db.replica.findUniqueOrThrow({ where: { id: sleeperId } });
    expect(row).toMatchObject({
      state: "sleeping",
      sleepLevel: 1,
      sleepingGpus: [0],
      sleepingBytes: 9_000_000_000n,
      drainIntent: null,
    });
    expect(await t.db.gpuReservation.count({ where: { replicaId: sleeperId } })).toBe(0);
    const closed = await t.db.gpuTime.findMany({ where: { replicaId: sleeperId } });
    expect(closed.map((g) => [g.category, g.gpus])).toEqual([["stopping", 1]]);

    // Placement sees it asleep on its node, wakeable while its GPU is free ...
    expect((await nodes())[0]!.sleepingReplicas).toEqual([
      { replicaId: sleeperId, deploymentId, sleepLevel: 1 },
    ]);
    // ... and not while another replica holds that GPU.
    const borrower = await t.db.replica.create({
      data: { orgId, endpointId, deploymentId, nodeId, state: "ready" },
    });
    await t.db.gpuReservation.create({ data: { nodeId, gpuIndex: 0, replicaId: borrower.id } });
    expect((await nodes())[0]!.sleepingReplicas).toBeUndefined();
    await t.db.gpuReservation.deleteMany({ where: { replicaId: borrower.id } });
    await t.db.replica.update({ where: { id: borrower.id }, data: { state: "stopped" } });
  });

  it("wakes: the next start takes its GPUs and retires it, and dispatch names it", async () => {
    const sleeper = await t.db.replica.findFirstOrThrow({ where: { state: "sleeping" } });
    const replica = await t.db.replica.create({
      data: { orgId, endpointId, deploymentId, state: "pending" },
    });
    const result = await placeReplica({ db: t.db, replicaId: replica.id, random: () => 0.5 });
    expect(result.placed).toHaveLength(1);
    const start = await t.db.coldStart.findFirstOrThrow({ where: { replicaId: replica.id } });
    // A 6.4 GB wake from host memory beats every path that reads the model from gp3.
    expect(start.path).toBe("wake");
    expect(start.locality).toBe("sleeping-replica");
    expect(await t.db.replica.findUniqueOrThrow({ where: { id: sleeper.id } })).toMatchObject({
      state: "stopped",
    });
    const reserved = await t.db.gpuReservation.findMany({ where: { replicaId: replica.id } });
    expect(reserved.map((g) => g.gpuIndex)).toEqual([0]);
    const plan = await prepareDispatch({ db: t.db, coldStartId: start.id });
    expect(plan.kind).toBe("send");
    if (plan.kind !== "send") return;
    expect(plan.request).toMatchObject({
      path: "wake",
      sleepingReplicaId: sleeper.id,
      gpus: [0],
    });
    // Asleep no more: nothing left to wake.
    const [left] = await prismaRows(t.db)<{ n: number }>(
      Prisma.sql`SELECT count(*)::int AS n FROM "Replica" WHERE state = 'sleeping'`,
    );
    expect(left!.n).toBe(0);
  });

  it("makes room on a full node by stopping the engine asleep longest", async () => {
    // 20 GiB: room for one sleeper of this model, not two.
    await emptyNode(20n);
    const old = await t.db.replica.create({
      data: {
        orgId,
        endpointId,
        deploymentId,
        nodeId,
        state: "sleeping",
        sleepLevel: 1,
        sleepingGpus: [0],
        sleepingBytes: 9_830_000_000n,
      },
    });
    const warm = await t.db.replica.create({
      data: { orgId, endpointId, deploymentId, nodeId, state: "warm" },
    });
    await t.db.gpuReservation.create({ data: { nodeId, gpuIndex: 0, replicaId: warm.id } });
    const result = await tendWarmPool({ db: t.db, endpointId, options: { gpuBudget: 4 } });
    expect(result.toSleep.map((s) => [s.replicaId, s.sleepLevel])).toEqual([[warm.id, 1]]);
    expect(result.toStop).toEqual([{ replicaId: old.id, nodeId }]);
    expect(await t.db.replica.findUniqueOrThrow({ where: { id: old.id } })).toMatchObject({
      state: "draining",
      drainIntent: "keep_alive_over",
    });
  });

  it("puts a scaled-down replica to sleep when the pool keeps none warm (no GPU budget)", async () => {
    await emptyNode(64n);
    const surplus = await t.db.replica.create({
      data: {
        orgId,
        endpointId,
        deploymentId,
        nodeId,
        state: "draining",
        drainIntent: "park_candidate",
      },
    });
    await t.db.gpuReservation.create({ data: { nodeId, gpuIndex: 0, replicaId: surplus.id } });
    const result = await tendWarmPool({ db: t.db, endpointId, options: { gpuBudget: 0 } });
    expect(result.toPark).toEqual([]);
    expect(result.toStop).toEqual([]);
    expect(result.toSleep.map((s) => [s.replicaId, s.sleepLevel])).toEqual([[surplus.id, 1]]);
  });
});
