import { DEMO_ENDPOINTS, demoDeploymentColumns } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../errors/index.ts";
import { chosenOptionOf } from "../placement/options-record.ts";
import { placeReplica } from "../placement/place-replica.ts";
import { prepareDispatch } from "../placement/prepare-dispatch.ts";
import { ingestTelemetry } from "../telemetry/ingest-telemetry.ts";

// The kernel-cache store from Postgres: the first start that compiles on a GPU model and driver
// is told to capture its caches (one claim per deployment × GPU × driver); its node's telemetry
// records the pushed digest; later starts on that GPU and driver are placed with the cache and
// told to fetch it by digest; another driver gets its own. Nodes report only their own starts.

const STORE = "localhost:5000/thaw-snapshots";
const DIGEST = `sha256:${"ab".repeat(32)}`;

describe("the kernel-cache store", () => {
  let t: TestDatabase;
  let orgId: string;
  let endpointId: string;
  let deploymentId: string;
  const nodeIds: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestDatabase();
    orgId = (await t.db.org.create({ data: { slug: "caches", name: "Caches" } })).id;
    for (const [name, driverVersion] of [
      ["node-550", "550.54"],
      ["node-535", "535.00"],
    ] as const) {
      const node = await t.db.node.create({
        data: {
          orgId,
          name,
          provider: "sim",
          runtime: "sim",
          instanceType: "g5.xlarge",
          gpuModel: "A10G",
          gpuCount: 8,
          driverVersion,
          cudaVersion: "12.4",
          vcpus: 4,
          networkGbps: 10,
          diskReadMiBps: 125,
          diskWriteMiBps: 125,
          pcieGBps: 25,
          memoryBytes: 16n * 2n ** 30n,
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
    // Pull only: the path is fixed, the node is what placement chooses.
    endpointId = (
      await t.db.endpoint.create({
        data: {
          orgId,
          slug: "cached",
          name: "Cached",
          gpuType: "A10G",
          maxReplicas: 4,
          allowedPaths: ["pull"],
        },
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
  });
  afterAll(async () => {
    await t.drop();
  });

  /** A pending replica placed, its GPUs on `onlyNode` (the other node is made full meanwhile). */
  async function placeOn(onlyNode: string) {
    const other = Object.keys(nodeIds).find((n) => n !== onlyNode)!;
    await t.db.node.update({ where: { id: nodeIds[other]! }, data: { state: "draining" } });
    try {
      const replica = await t.db.replica.create({
        data: { orgId, endpointId, deploymentId, state: "pending" },
      });
      const result = await placeReplica({ db: t.db, replicaId: replica.id, random: () => 0.5 });
      expect(result.placed).toHaveLength(1);
      const start = await t.db.coldStart.findFirstOrThrow({ where: { replicaId: replica.id } });
      expect(start.nodeId).toBe(nodeIds[onlyNode]);
      return start;
    } finally {
      await t.db.node.update({ where: { id: nodeIds[other]! }, data: { state: "ready" } });
    }
  }

  async function dispatch(coldStartId: string) {
    const plan = await prepareDispatch({ db: t.db, coldStartId, kernelCacheStore: STORE });
    expect(plan.kind).toBe("send");
    if (plan.kind !== "send") throw new Error(plan.reason);
    return plan.request;
  }

  const nodeActor = (name: string) => ({ type: "node" as const, nodeId: nodeIds[name]!, orgId });

  it("claims one capture per GPU and driver, records the reported digest, then fetches it", async () => {
    const first = await placeOn("node-550");
    const firstRequest = await dispatch(first.id);
    const claim = firstRequest.kernelCache?.capture;
    expect(claim).toBeDefined();
    expect(claim!.ref).toBe(`${STORE}:kc.${orgId}.${deploymentId}.${claim!.kernelCacheId}`);
    // A second start there while the first is still coming up compiles without a claim.
    const second = await placeOn("node-550");
    expect((await dispatch(second.id)).kernelCache).toBeUndefined();

    // Another node cannot report the first start's capture: the batch is refused whole.
    const report = {
      events: [],
      outcomes: [],
      kernelCaches: [
        {
          coldStartId: first.id,
          kernelCacheId: claim!.kernelCacheId,
          digest: DIGEST,
          bytes: 420_000_000,
        },
      ],
    };
    await expect(
      ingestTelemetry({ actor: nodeActor("node-535"), input: report, db: t.db }),
    ).rejects.toThrow(AppError);
    expect(
      (await t.db.kernelCache.findUniqueOrThrow({ where: { id: claim!.kernelCacheId } })).status,
    ).toBe("capturing");
    await ingestTelemetry({ actor: nodeActor("node-550"), input: report, db: t.db });
    const stored = await t.db.kernelCache.findUniqueOrThrow({
      where: { id: claim!.kernelCacheId },
    });
    expect(stored).toMatchObject({
      status: "ready",
      digest: DIGEST,
      bytes: 420_000_000n,
      gpuModel: "A10G",
      driverVersion: "550.54",
      sourceNodeId: nodeIds["node-550"],
    });

    // The next start on that GPU and driver is placed with the cache and fetches it by digest.
    const third = await placeOn("node-550");
    expect(chosenOptionOf(third.options)).toMatchObject({ kernelCacheId: stored.id });
    expect((await dispatch(third.id)).kernelCache).toEqual({
      fetch: {
        kernelCacheId: stored.id,
        ref: `${STORE}@${DIGEST}`,
        bytes: 420_000_000,
      },
    });
    // Another driver's kernels are not these: that node claims a capture of its own.
    const other = await placeOn("node-535");
    expect(chosenOptionOf(other.options)).not.toHaveProperty("kernelCacheId");
    const otherClaim = (await dispatch(other.id)).kernelCache?.capture;
    expect(otherClaim?.kernelCacheId).toBeDefined();
    expect(otherClaim?.kernelCacheId).not.toBe(stored.id);
  });

  it("hands a claim whose start failed to the next start, and ignores the failed one's late report", async () => {
    const failing = await t.db.kernelCache.findFirstOrThrow({
      where: { deploymentId, driverVersion: "535.00", status: "capturing" },
    });
    await t.db.coldStart.update({
      where: { id: failing.coldStartId! },
      data: { status: "failed" },
    });
    const next = await placeOn("node-535");
    const taken = (await dispatch(next.id)).kernelCache?.capture;
    expect(taken?.kernelCacheId).toBe(failing.id);
    expect(
      (await t.db.kernelCache.findUniqueOrThrow({ where: { id: failing.id } })).coldStartId,
    ).toBe(next.id);
    // The failed start's report, arriving late, completes nothing.
    await ingestTelemetry({
      actor: nodeActor("node-535"),
      input: {
        events: [],
        outcomes: [],
        kernelCaches: [
          {
            coldStartId: failing.coldStartId!,
            kernelCacheId: failing.id,
            digest: DIGEST,
            bytes: 1,
          },
        ],
      },
      db: t.db,
    });
    expect((await t.db.kernelCache.findUniqueOrThrow({ where: { id: failing.id } })).status).toBe(
      "capturing",
    );
  });

  it("captures nothing without a store", async () => {
    // The 535 claim's start fails too: the claim is free to take again.
    await t.db.coldStart.updateMany({
      where: { nodeId: nodeIds["node-535"]!, status: "scheduled" },
      data: { status: "failed" },
    });
    const start = await placeOn("node-535");
    const plan = await prepareDispatch({ db: t.db, coldStartId: start.id });
    expect(plan.kind).toBe("send");
    expect(plan.kind === "send" ? plan.request.kernelCache : "not sent").toBeUndefined();
    // With one, the same start would have taken it.
    expect((await dispatch(start.id)).kernelCache?.capture).toBeDefined();
  });
});
