import type { DbClient } from "@thaw/db";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { placeReplica } from "../placement/place-replica.ts";
import { prepareDispatch } from "../placement/prepare-dispatch.ts";
import {
  beginSnapshotCapture,
  completeSnapshotCapture,
  failSnapshotCapture,
  findSnapshotWork,
} from "./index.ts";

// The snapshot use cases against real Postgres: the capture recorded once however many
// callers race, completed into a ready snapshot on the source node, or failed and backed off.

/** The operator's snapshot store (THAW_SNAPSHOT_REGISTRY): never the deployments' registry. */
const snapshotStore = "snapshots.ops.thaw.test/thaw-snapshots";
const DIGEST = `sha256:${"d".repeat(64)}`;

describe("snapshot capture use cases", () => {
  let t: TestDatabase;
  let db: DbClient;
  let orgId: string;

  const endpointOf = (slug: string) => db.endpoint.findFirstOrThrow({ where: { orgId, slug } });

  /** A ready node of `gpuModel` with one ready replica of the endpoint's deployment on it. */
  async function readyReplica(slug: string, gpuModel: string, name: string) {
    const endpoint = await endpointOf(slug);
    const node = await db.node.create({
      data: {
        orgId,
        name,
        provider: "sim",
        runtime: "sim",
        instanceType: gpuModel === "A10G" ? "g5.xlarge" : "g6e.xlarge",
        gpuModel,
        gpuCount: 1,
        vcpus: 4,
        networkGbps: 10,
        diskReadMiBps: 125,
        diskWriteMiBps: 125,
        pcieGBps: 25,
        driverVersion: "570.133.20",
        cudaVersion: "12.8",
        state: "ready",
        agentUrl: `http://127.0.0.1:1/hosts/${name}`,
      },
    });
    const replica = await db.replica.create({
      data: {
        orgId,
        endpointId: endpoint.id,
        deploymentId: endpoint.activeDeploymentId!,
        nodeId: node.id,
        state: "ready",
        readyAt: new Date(),
      },
    });
    await db.gpuReservation.create({
      data: { nodeId: node.id, gpuIndex: 0, replicaId: replica.id },
    });
    // The start that brought it up: the endpoint's recent cold-start rate.
    await db.coldStart.create({
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
    return { endpoint, node, replica, deploymentId: endpoint.activeDeploymentId! };
  }

  beforeAll(async () => {
    t = await createTestDatabase();
    db = t.db;
    ({ orgId } = await seedDemo(db));
  });
  afterAll(async () => {
    await t.drop();
  });

  it("records one capture however many callers race, then completes it on the source node", async () => {
    const { node, replica, deploymentId, endpoint } = await readyReplica(
      "llama-3-2-3b-instruct",
      "A10G",
      "a10g-1",
    );
    expect(await findSnapshotWork({ db })).toContain(deploymentId);

    const plans = await Promise.all([
      beginSnapshotCapture({ db, deploymentId, snapshotStore }),
      beginSnapshotCapture({ db, deploymentId, snapshotStore }),
      beginSnapshotCapture({ db, deploymentId, snapshotStore }),
    ]);
    const captures = plans.filter((p) => p.kind === "capture");
    expect(captures).toHaveLength(3);
    expect(captures.filter((p) => !p.resumed)).toHaveLength(1);
    expect(new Set(captures.map((p) => p.snapshotId)).size).toBe(1);
    const plan = captures.find((p) => !p.resumed)!;
    expect(plan.reason).toMatch(/restore .* vs pull .* on a10g-1/);
    expect(plan.nodeId).toBe(node.id);
    expect(plan.request).toEqual({
      replicaId: replica.id,
      snapshotId: plan.snapshotId,
      checkpointRef: `${snapshotStore}:${orgId}.${deploymentId}.${plan.snapshotId}`,
      sleepLevel: 2,
      push: true,
    });
    const rows = await db.snapshot.findMany({ where: { deploymentId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      status: "capturing",
      gpuModel: "A10G",
      driverVersion: "570.133.20",
      cudaVersion: "12.8",
      sourceNodeId: node.id,
      sourceReplicaId: replica.id,
    });

    // Named in the operator's store, whatever registry the deployment's image comes from.
    expect(plan.request.checkpointRef).not.toContain("registry.demo.thaw.dev");
    // A capture answer without a digest never makes a snapshot ready.
    await expect(
      completeSnapshotCapture({ db, snapshotId: plan.snapshotId, pushed: true, digest: "" }),
    ).rejects.toThrow("is not a sha256 digest");
    expect((await db.snapshot.findUniqueOrThrow({ where: { id: plan.snapshotId } })).status).toBe(
      "capturing",
    );

    const done = await completeSnapshotCapture({
      db,
      snapshotId: plan.snapshotId,
      pushed: true,
      digest: DIGEST,
    });
    expect(done).toEqual({ completed: true, endpointId: endpoint.id, nodeId: node.id });
    expect(
      await completeSnapshotCapture({
        db,
        snapshotId: plan.snapshotId,
        pushed: true,
        digest: DIGEST,
      }),
    ).toEqual({ completed: false, endpointId: null, nodeId: null });
    const ready = await db.snapshot.findUniqueOrThrow({
      where: { id: plan.snapshotId },
      include: { nodeCopies: true },
    });
    expect(ready.status).toBe("ready");
    expect(ready.digest).toBe(DIGEST);
    expect(ready.location).toBe("store");
    expect(ready.bytes).toBe(3_400_000_000n);
    expect(ready.nodeCopies.map((c) => c.nodeId)).toEqual([node.id]);
    // The agent stops the captured replica: its GPU is free for the replacement.
    expect((await db.replica.findUniqueOrThrow({ where: { id: replica.id } })).state).toBe(
      "stopped",
    );
    expect(await db.gpuReservation.count({ where: { replicaId: replica.id } })).toBe(0);

    // Another ready replica of the same deployment on the same binding: nothing to capture.
    const again = await db.replica.create({
      data: {
        orgId,
        endpointId: endpoint.id,
        deploymentId,
        nodeId: node.id,
        state: "ready",
      },
    });
    const skip = await beginSnapshotCapture({ db, deploymentId, snapshotStore });
    expect(skip).toEqual({
      kind: "skip",
      reason: "a ready or capturing snapshot already exists for every GPU/driver/CUDA it runs on",
    });
    expect(await findSnapshotWork({ db })).not.toContain(deploymentId);
    await db.replica.update({ where: { id: again.id }, data: { state: "stopped" } });
  });

  it("a failed capture is deleted with its reason and backs the deployment off", async () => {
    const { deploymentId, endpoint } = await readyReplica("meta-llama-3-8b", "L40S", "l40s-1");
    const plan = await beginSnapshotCapture({ db, deploymentId, snapshotStore });
    expect(plan.kind).toBe("capture");
    if (plan.kind !== "capture") return;
    expect(
      await failSnapshotCapture({ db, snapshotId: plan.snapshotId, reason: "criu dump failed" }),
    ).toEqual({ endpointId: endpoint.id });
    const failed = await db.snapshot.findUniqueOrThrow({ where: { id: plan.snapshotId } });
    expect([failed.status, failed.error]).toEqual(["deleted", "criu dump failed"]);
    const next = await beginSnapshotCapture({ db, deploymentId, snapshotStore });
    expect(next.kind).toBe("skip");
    expect(next.reason).toMatch(/backing off after 1 quarantined or failed snapshot/);
  });

  it("captures into the operator's store only: none configured, no snapshot (issue 23)", async () => {
    const { deploymentId } = await readyReplica("llama-3-2-1b-gguf", "A10G", "a10g-3");
    const deployment = await db.deployment.findUniqueOrThrow({ where: { id: deploymentId } });
    expect(deployment.imageRef).toMatch(/^registry\.demo\.thaw\.dev\//);
    expect(await beginSnapshotCapture({ db, deploymentId, snapshotStore: null })).toEqual({
      kind: "skip",
      reason:
        "no snapshot store is configured (THAW_SNAPSHOT_REGISTRY): checkpoints go only to a store the operator owns",
    });
    expect(await db.snapshot.count({ where: { deploymentId } })).toBe(0);
  });

  it("never captures for an endpoint that does not allow restore", async () => {
    const { deploymentId, endpoint } = await readyReplica("gpt-oss-20b", "L40S", "l40s-2");
    await db.endpoint.update({
      where: { id: endpoint.id },
      data: { allowedPaths: ["warm", "lazy", "pull"] },
    });
    expect(await beginSnapshotCapture({ db, deploymentId, snapshotStore })).toEqual({
      kind: "skip",
      reason: "restore is not allowed by the endpoint",
    });
    expect(await db.snapshot.count({ where: { deploymentId } })).toBe(0);
    expect(await findSnapshotWork({ db })).not.toContain(deploymentId);
  });

  it("a capture whose worker was lost is failed after a while and decided anew", async () => {
    const { deploymentId } = await readyReplica("llama-3-2-3b-instruct", "A10G", "a10g-2");
    // a10g-1's ready snapshot covers this binding already: give this node another driver.
    await db.node.updateMany({ where: { name: "a10g-2" }, data: { driverVersion: "580.1" } });
    const first = await beginSnapshotCapture({ db, deploymentId, snapshotStore });
    expect(first.kind === "capture" && !first.resumed).toBe(true);
    const later = new Date(Date.now() + 21 * 60_000);
    const second = await beginSnapshotCapture({ db, deploymentId, snapshotStore, now: later });
    // The lost capture counts as a failure: backed off, not captured twice.
    expect(second.kind).toBe("skip");
    expect(second.reason).toMatch(/backing off after 1/);
    const rows = await db.snapshot.findMany({ where: { deploymentId, driverVersion: "580.1" } });
    expect(rows.map((r) => r.status)).toEqual(["deleted"]);
  });
  it("dispatches a level-2 restore with the engine's weight reload, and staging where it pays", async () => {
    const endpoint = await endpointOf("gpt-oss-20b");
    const deploymentId = endpoint.activeDeploymentId!;
    await db.endpoint.update({ where: { id: endpoint.id }, data: { allowedPaths: ["restore"] } });
    const restoreOn = async (name: string, diskMiBps: number) => {
      const node = await db.node.create({
        data: {
          orgId,
          name,
          provider: "aws",
          runtime: "containerd",
          instanceType: "g6e.xlarge",
          gpuModel: "L40S",
          gpuCount: 1,
          vcpus: 4,
          networkGbps: 20,
          diskReadMiBps: diskMiBps,
          diskWriteMiBps: diskMiBps,
          pcieGBps: 25,
          driverVersion: "570.133.20",
          cudaVersion: "12.8",
          state: "ready",
          agentUrl: `https://127.0.0.1:1/${name}`,
        },
      });
      const snapshot = await db.snapshot.create({
        data: {
          orgId,
          deploymentId,
          gpuModel: "L40S",
          driverVersion: "570.133.20",
          cudaVersion: "12.8",
          location: "store",
          uri: `${snapshotStore}:${name}`,
          digest: `sha256:${"a".repeat(64)}`,
          bytes: 3_400_000_000n,
          sleepLevel: 2,
          status: "ready",
        },
      });
      await db.nodeSnapshot.create({ data: { nodeId: node.id, snapshotId: snapshot.id } });
      const replica = await db.replica.create({
        data: { orgId, endpointId: endpoint.id, deploymentId, state: "pending" },
      });
      await placeReplica({ db, replicaId: replica.id, random: () => 0.5 });
      const start = await db.coldStart.findFirstOrThrow({ where: { replicaId: replica.id } });
      expect([start.path, start.nodeId]).toEqual(["restore", node.id]);
      const plan = await prepareDispatch({ db, coldStartId: start.id });
      // Off the placement's way for the next case: this node's GPU stays taken.
      await db.snapshot.update({ where: { id: snapshot.id }, data: { status: "deleted" } });
      if (plan.kind !== "send") throw new Error(`not sent: ${plan.reason}`);
      return plan.request.deployment.snapshot!;
    };
    const fast = await restoreOn("l40s-fast-volume", 1_000);
    expect(fast).toMatchObject({
      sleepLevel: 2,
      wake: { path: "/wake_up" },
      reloadWeights: { path: "/collective_rpc", body: '{"method":"reload_weights"}' },
      stageWeights: true,
    });
    // gp3: one reader already meets the disk's ceiling; staging would only add a copy.
    const gp3 = await restoreOn("l40s-gp3", 125);
    expect(gp3.reloadWeights).toBeDefined();
    expect(gp3.stageWeights).toBeUndefined();
  });

  it("does not capture a tensor-parallel deployment where two others at its degree were quarantined", async () => {
    const { deploymentId, endpoint } = await readyReplica("llama-3-2-1b-gguf", "A10G", "a10g-tp");
    const others = await Promise.all(["meta-llama-3-8b", "gpt-oss-20b"].map(endpointOf));
    for (const e of [endpoint, ...others])
      await db.endpoint.update({ where: { id: e.id }, data: { gpuCount: 2 } });
    const quarantined = await Promise.all(
      others.map((e) =>
        db.snapshot.create({
          data: {
            orgId,
            deploymentId: e.activeDeploymentId!,
            gpuModel: "A10G",
            driverVersion: "570.133.20",
            cudaVersion: "12.8",
            location: "store",
            uri: `${snapshotStore}:tp-${e.id}`,
            bytes: 3_400_000_000n,
            status: "quarantined",
          },
        }),
      ),
    );
    const skipped = await beginSnapshotCapture({ db, deploymentId, snapshotStore });
    expect(skipped.kind).toBe("skip");
    expect(skipped.reason).toMatch(
      /tensor-parallel 2 on A10G driver 570\.133\.20 were quarantined for 2 other deployments/,
    );
    // At another degree the same failures say nothing of this deployment: it is decided on
    // what a restore would save (a small GGUF model, whose pulls are short: nothing here).
    await db.endpoint.update({ where: { id: others[1]!.id }, data: { gpuCount: 4 } });
    const other = await beginSnapshotCapture({ db, deploymentId, snapshotStore });
    expect(other.reason).toMatch(/^restore would not be faster by enough/);
    await db.snapshot.deleteMany({ where: { id: { in: quarantined.map((q) => q.id) } } });
  });
});
