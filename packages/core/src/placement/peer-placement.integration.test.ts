import { prismaRows } from "@thaw/db";
import { DEMO_ENDPOINTS, demoDeploymentColumns } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { getColdStart } from "../cold-starts/get-cold-start.ts";
import { loadPeerSources } from "./load-placement-state.ts";
import { chosenOptionOf } from "./options-record.ts";
import { placeReplica } from "./place-replica.ts";
import { prepareDispatch } from "./prepare-dispatch.ts";

// The peer path from Postgres: a serving replica of the deployment on one node is found as a
// source, a new replica on another node copies from it (its choice recorded with the source),
// dispatch names the source and hands a simulated host the source's figures — and a node whose
// engines cannot receive a peer copy is never offered one.

describe("placing a replica that copies its weights from a serving one", () => {
  let t: TestDatabase;
  let orgId: string;
  let endpointId: string;
  let deploymentId: string;
  let sourceReplicaId: string;
  const nodeIds: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestDatabase();
    orgId = (await t.db.org.create({ data: { slug: "peers", name: "Peers" } })).id;
    for (const name of ["serving-node", "new-node"]) {
      const node = await t.db.node.create({
        data: {
          orgId,
          name,
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
          memoryBytes: 16n * 2n ** 30n,
          peerTransfer: true,
          state: "ready",
          lastHeartbeatAt: new Date(),
          agentUrl: `http://127.0.0.1:9/hosts/${name}`,
        },
      });
      nodeIds[name] = node.id;
    }
    const model = DEMO_ENDPOINTS.find(
      (e) => e.gpuType === "A10G" && e.deployment.engine === "vllm",
    )!.deployment;
    endpointId = (
      await t.db.endpoint.create({
        data: { orgId, slug: "peered", name: "Peered", gpuType: "A10G", maxReplicas: 2 },
      })
    ).id;
    deploymentId = (
      await t.db.deployment.create({
        data: { orgId, endpointId, version: 1, ...demoDeploymentColumns(model), status: "active" },
      })
    ).id;
    await t.db.endpoint.update({
      where: { id: endpointId },
      data: { activeDeploymentId: deploymentId },
    });
    const serving = await t.db.replica.create({
      data: { orgId, endpointId, deploymentId, nodeId: nodeIds["serving-node"]!, state: "ready" },
    });
    sourceReplicaId = serving.id;
    await t.db.gpuReservation.create({
      data: { nodeId: nodeIds["serving-node"]!, gpuIndex: 0, replicaId: serving.id },
    });
  });
  afterAll(async () => {
    await t.drop();
  });

  // Each case starts from the serving replica alone: the new node empty, no start in flight.
  beforeEach(async () => {
    await t.db.replica.update({ where: { id: sourceReplicaId }, data: { state: "ready" } });
    await t.db.gpuReservation.deleteMany({ where: { nodeId: nodeIds["new-node"]! } });
    await t.db.coldStart.updateMany({
      where: { status: { in: ["scheduled", "dispatched", "running"] } },
      data: { status: "cancelled" },
    });
    await t.db.replica.updateMany({
      where: { id: { not: sourceReplicaId } },
      data: { state: "stopped" },
    });
  });

  async function placeOne() {
    const replica = await t.db.replica.create({
      data: { orgId, endpointId, deploymentId, state: "pending" },
    });
    const result = await placeReplica({ db: t.db, replicaId: replica.id, random: () => 0.5 });
    expect(result.placed).toHaveLength(1);
    return t.db.coldStart.findFirstOrThrow({ where: { replicaId: replica.id } });
  }

  it("copies from the serving replica, and dispatch names it with the source's figures", async () => {
    const start = await placeOne();
    // 6.4 GB over 10 Gbps and the source's kernel caches beat reading the model from gp3 and
    // compiling from cold.
    expect(start.path).toBe("peer");
    expect(start.nodeId).toBe(nodeIds["new-node"]);
    expect(chosenOptionOf(start.options)).toMatchObject({
      path: "peer",
      peerSourceReplicaId: sourceReplicaId,
      peerSourceNodeName: "serving-node",
    });
    // The copy in flight loads its source: the next placement sees it sending one.
    const [loaded] = await loadPeerSources(prismaRows(t.db), orgId, deploymentId);
    expect(loaded).toMatchObject({ replicaId: sourceReplicaId, transfersInFlight: 1 });
    // The cold-start page says where the copy came from.
    const view = await getColdStart({
      actor: { type: "system", orgId },
      input: { id: start.id },
      db: t.db,
    });
    expect(view.options.feasible?.find((o) => o.chosen)).toMatchObject({
      path: "peer",
      peerSourceNodeName: "serving-node",
    });
    const plan = await prepareDispatch({ db: t.db, coldStartId: start.id });
    expect(plan.kind).toBe("send");
    if (plan.kind !== "send") return;
    expect(plan.request.peerSource).toMatchObject({
      replicaId: sourceReplicaId,
      nodeName: "serving-node",
      rdma: false,
      kernelCaches: true,
    });
    expect(plan.request.deployment.simulation?.peer).toMatchObject({
      sourceNetworkGbps: 10,
      sourcePcieGBps: 25,
      gpus: 1,
    });

    // The source stops serving before the start is sent: nothing to copy from, the start fails
    // (and placement tries the next option).
    await t.db.replica.update({ where: { id: sourceReplicaId }, data: { state: "draining" } });
    expect(await prepareDispatch({ db: t.db, coldStartId: start.id })).toEqual({
      kind: "fail",
      reason: "the chosen peer source is no longer serving",
    });
  });

  it("never offers a peer copy to a node whose engines cannot receive one, and says why", async () => {
    await t.db.node.update({
      where: { id: nodeIds["new-node"]! },
      data: { peerTransfer: false },
    });
    const start = await placeOne();
    expect(start.path).not.toBe("peer");
    const { infeasible } = start.options as { infeasible: { path: string; reason: string }[] };
    expect(infeasible).toContainEqual(
      expect.objectContaining({
        path: "peer",
        reason: "node's engines cannot receive a peer copy (no ModelExpress)",
      }),
    );
  });

  it("restores a level-2 snapshot with its weights from the serving replica, and from disk once it is gone", async () => {
    await t.db.node.updateMany({
      where: { id: { in: Object.values(nodeIds) } },
      data: { driverVersion: "550.54", cudaVersion: "12.4", peerTransfer: true },
    });
    await t.db.snapshot.create({
      data: {
        orgId,
        deploymentId,
        gpuModel: "A10G",
        driverVersion: "550.54",
        cudaVersion: "12.4",
        location: "store",
        uri: `localhost:5000/thaw-snapshots:${orgId}.${deploymentId}.level2`,
        digest: `sha256:${"cd".repeat(32)}`,
        bytes: 3_400_000_000n,
        sleepLevel: 2,
        status: "ready",
      },
    });
    await t.db.endpoint.update({ where: { id: endpointId }, data: { allowedPaths: ["restore"] } });
    try {
      const start = await placeOne();
      // gp3 gives the engine's reload 125 MiB/s; the serving host's 10 Gbps give ~1.1 GB/s.
      expect(start.path).toBe("restore");
      expect(chosenOptionOf(start.options)).toMatchObject({
        path: "restore",
        peerSourceReplicaId: sourceReplicaId,
        peerSourceNodeName: "serving-node",
      });
      const plan = await prepareDispatch({ db: t.db, coldStartId: start.id });
      expect(plan.kind).toBe("send");
      if (plan.kind !== "send") return;
      expect(plan.request.peerSource).toMatchObject({ replicaId: sourceReplicaId, rdma: false });
      expect(plan.request.deployment.snapshot).toMatchObject({ sleepLevel: 2 });
      expect(plan.request.deployment.snapshot?.stageWeights).toBeUndefined();
      expect(plan.request.deployment.simulation?.peer).toMatchObject({ sourceNetworkGbps: 10 });
      // The restore's weights copy loads the source like a peer start's.
      const [loaded] = await loadPeerSources(prismaRows(t.db), orgId, deploymentId);
      expect(loaded).toMatchObject({ replicaId: sourceReplicaId, transfersInFlight: 1 });

      // The source stops serving before the start is sent: the restore reads its own files.
      await t.db.replica.update({ where: { id: sourceReplicaId }, data: { state: "draining" } });
      const fallback = await prepareDispatch({ db: t.db, coldStartId: start.id });
      expect(fallback.kind).toBe("send");
      if (fallback.kind !== "send") return;
      expect(fallback.request.peerSource).toBeUndefined();
      expect(fallback.request.deployment.snapshot).toMatchObject({ sleepLevel: 2 });
    } finally {
      await t.db.endpoint.update({
        where: { id: endpointId },
        data: { allowedPaths: ["warm", "wake", "restore", "peer", "lazy", "pull"] },
      });
    }
  });
});
