import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StartPath } from "../vocabulary/index";
import { enumerateStartOptions } from "./enumerate-start-options";
import { HOST_PROFILES, scenarioHostFromProfile } from "../cold-start-model/index";
import { deployment, endpoint, L40S, makeNode, makeSnapshot } from "./test-fixtures";

describe("enumerateStartOptions", () => {
  it("offers warm only where an idle replica of the same deployment sits", () => {
    const nodes = [
      makeNode({
        id: "a",
        name: "a",
        idleWarmReplicas: [{ replicaId: "r1", deploymentId: deployment.id }],
      }),
      makeNode({
        id: "b",
        name: "b",
        idleWarmReplicas: [{ replicaId: "r2", deploymentId: "other" }],
      }),
    ];
    const { feasible, infeasible } = enumerateStartOptions({
      endpoint,
      deployment,
      nodes,
      snapshots: [],
    });
    const warm = feasible.filter((o) => o.path === "warm");
    expect(warm).toEqual([
      expect.objectContaining({ nodeId: "a", warmReplicaId: "r1", gpusToReserve: 0 }),
    ]);
    expect(infeasible).toContainEqual(
      expect.objectContaining({
        nodeId: "b",
        path: "warm",
        reason: "no idle warm replica of this deployment",
      }),
    );
  });

  it("offers wake where a sleeping replica of the deployment sits and its GPUs are free", () => {
    const sleeping = (replicaId: string, deploymentId: string) => [
      { replicaId, deploymentId, sleepLevel: 1 as const },
    ];
    const nodes = [
      makeNode({ id: "a", name: "a", sleepingReplicas: sleeping("s1", deployment.id) }),
      makeNode({ id: "b", name: "b", sleepingReplicas: sleeping("s2", "other") }),
      // Asleep here, but every GPU is taken by other replicas: it cannot wake now.
      makeNode({
        id: "c",
        name: "c",
        freeGpus: 0,
        sleepingReplicas: sleeping("s3", deployment.id),
      }),
    ];
    const { feasible, infeasible } = enumerateStartOptions({
      endpoint,
      deployment,
      nodes,
      snapshots: [],
    });
    // Unlike a warm handover, a wake reserves GPUs: the sleeping engine gave them back.
    expect(feasible.filter((o) => o.path === "wake")).toEqual([
      expect.objectContaining({
        nodeId: "a",
        locality: "sleeping-replica",
        gpusToReserve: endpoint.gpuCount,
        sleepingReplica: { replicaId: "s1", deploymentId: deployment.id, sleepLevel: 1 },
      }),
    ]);
    const reasons = infeasible.filter((o) => o.path === "wake").map((o) => [o.nodeId, o.reason]);
    expect(reasons).toEqual([
      ["b", "no sleeping replica of this deployment"],
      ["c", "needs 1 free GPU(s), node has 0"],
    ]);
  });

  it("marks cached images and local snapshots as locality", () => {
    const node = makeNode({
      cachedImageDigests: ["sha256:plain"],
      localSnapshotIds: ["snapshot-1"],
    });
    const { feasible } = enumerateStartOptions({
      endpoint,
      deployment,
      nodes: [node],
      snapshots: [makeSnapshot()],
    });
    const locality = Object.fromEntries(feasible.map((o) => [o.path, o.locality]));
    expect(locality).toEqual({ restore: "snapshot-local", lazy: "cold", pull: "image-cached" });
  });

  it("asks for the weights staged apart on a restore only where it pays: a fast volume, not gp3", () => {
    const restoreOn = (diskReadMiBps: number, sleepLevel: 1 | 2 = 2) => {
      const node = makeNode({ localSnapshotIds: ["snapshot-1"] });
      node.host = { ...node.host, diskReadMiBps, diskWriteMiBps: diskReadMiBps };
      const { feasible } = enumerateStartOptions({
        endpoint,
        deployment,
        nodes: [node],
        snapshots: [makeSnapshot({ sleepLevel })],
      });
      return feasible.find((o) => o.path === "restore")!;
    };
    expect(restoreOn(1_000).stageWeights).toBe(true);
    expect(restoreOn(125).stageWeights).toBeUndefined();
    // A level-1 image carries its weights: nothing to stage.
    expect(restoreOn(1_000, 1).stageWeights).toBeUndefined();
  });

  it("rejects nodes that are not ready, of the wrong GPU, or without free GPUs", () => {
    const nodes = [
      makeNode({ id: "draining", state: "draining" }),
      makeNode({ id: "a10g", gpuModel: "NVIDIA A10G" }),
      makeNode({ id: "full", freeGpus: 0 }),
    ];
    const { feasible, infeasible } = enumerateStartOptions({
      endpoint,
      deployment,
      nodes,
      snapshots: [],
    });
    expect(feasible).toEqual([]);
    expect(new Set(infeasible.map((o) => o.reason))).toEqual(
      new Set([
        "node draining",
        `GPU NVIDIA A10G ≠ endpoint's ${L40S}`,
        "needs 1 free GPU(s), node has 0",
        "no idle warm replica of this deployment",
        "no sleeping replica of this deployment",
        "no snapshot of this deployment",
        "no serving replica of this deployment to copy from",
      ]),
    );
  });

  it("offers peer from the serving replica whose copy is fastest, never from the node itself", () => {
    const source = (nodeId: string, profile: "g6e.xlarge" | "p5.48xlarge", inFlight = 0) => ({
      replicaId: `serving-${nodeId}`,
      nodeId,
      nodeName: nodeId,
      host: scenarioHostFromProfile(HOST_PROFILES[profile]),
      transfersInFlight: inFlight,
    });
    const p5 = scenarioHostFromProfile(HOST_PROFILES["p5.48xlarge"]);
    const nodes = [
      makeNode({ id: "a", name: "a", cachedImageDigests: ["sha256:plain"] }),
      makeNode({ id: "b", name: "b", host: p5 }),
      makeNode({ id: "c", name: "c", freeGpus: 0 }),
    ];
    const peerSources = [
      source("a", "g6e.xlarge"),
      source("b", "p5.48xlarge"),
      source("x", "p5.48xlarge", 3),
    ];
    const { feasible, infeasible } = enumerateStartOptions({
      endpoint,
      deployment,
      nodes,
      snapshots: [],
      peerSources,
    });
    const peer = feasible.filter((o) => o.path === "peer");
    // Node a has no fabric: TCP, bound by its own 20 Gbps whichever source (the first of the
    // equals, b, and never a itself). Node b (EFA) copies from x over RDMA though x sends
    // three other copies: a quarter of a 400 Gbps rail beats TCP from a's 20 Gbps.
    expect(peer.map((o) => [o.nodeId, o.locality, o.peerSource?.replicaId])).toEqual([
      ["a", "image-cached", "serving-b"],
      ["b", "cold", "serving-x"],
    ]);
    expect(infeasible.find((o) => o.path === "peer" && o.nodeId === "c")?.reason).toBe(
      "needs 1 free GPU(s), node has 0",
    );
    const alone = enumerateStartOptions({
      endpoint,
      deployment,
      nodes: [nodes[0]!],
      snapshots: [],
      peerSources: [peerSources[0]!],
    });
    expect(alone.infeasible.find((o) => o.path === "peer")?.reason).toBe(
      "the only serving replicas of this deployment are on this node",
    );
  });

  it("fetches the stored kernel cache of the node's GPU and driver on the paths that compile", () => {
    const withCaches = {
      ...deployment,
      kernelCaches: [
        { id: "cache-550", gpuModel: L40S, driverVersion: "550.54", bytes: 400e6 },
        { id: "cache-535", gpuModel: L40S, driverVersion: "535.00", bytes: 300e6 },
      ],
    };
    const nodes = [
      makeNode({ id: "a", name: "a" }),
      makeNode({ id: "b", name: "b", driverVersion: "535.00" }),
      makeNode({ id: "c", name: "c", driverVersion: "560.10" }),
    ];
    const { feasible } = enumerateStartOptions({
      endpoint,
      deployment: withCaches,
      nodes,
      snapshots: [makeSnapshot()],
    });
    const cacheOf = (nodeId: string, path: string) =>
      feasible.find((o) => o.nodeId === nodeId && o.path === path)?.kernelCache?.id ?? null;
    expect(nodes.map((n) => [cacheOf(n.id, "pull"), cacheOf(n.id, "lazy")])).toEqual([
      ["cache-550", "cache-550"],
      ["cache-535", "cache-535"],
      [null, null],
    ]);
    // A restored engine kept its kernels: it fetches none.
    expect(cacheOf("a", "restore")).toBeNull();
  });

  it("has a level-2 restore's weights sent by a serving replica where that beats the disk", () => {
    const serving = {
      replicaId: "serving-b",
      nodeId: "b",
      nodeName: "b",
      host: scenarioHostFromProfile(HOST_PROFILES["g6e.xlarge"]),
      transfersInFlight: 0,
    };
    const input = {
      endpoint,
      deployment,
      nodes: [makeNode({ id: "a", name: "a" })],
      snapshots: [makeSnapshot({ sleepLevel: 2 })],
    };
    const restoreOf = (result: ReturnType<typeof enumerateStartOptions>) =>
      result.feasible.find((o) => o.path === "restore");
    // gp3 gives one reader 125 MiB/s; the source's 20 Gbps give 2.25 GB/s.
    expect(
      restoreOf(enumerateStartOptions({ ...input, peerSources: [serving] }))?.peerSource?.replicaId,
    ).toBe("serving-b");
    expect(restoreOf(enumerateStartOptions(input))?.peerSource).toBeUndefined();
    // A level-1 image kept its weights; a node without ModelExpress cannot receive them.
    expect(
      restoreOf(
        enumerateStartOptions({
          ...input,
          snapshots: [makeSnapshot({ sleepLevel: 1 })],
          peerSources: [serving],
        }),
      )?.peerSource,
    ).toBeUndefined();
    expect(
      restoreOf(
        enumerateStartOptions({
          ...input,
          nodes: [makeNode({ id: "a", name: "a", peerTransfer: false })],
          peerSources: [serving],
        }),
      )?.peerSource,
    ).toBeUndefined();
  });

  it("never offers a quarantined or incompatible snapshot, and says why", () => {
    const nodes = [makeNode({ localSnapshotIds: ["q", "driver"] })];
    const snapshots = [
      makeSnapshot({ id: "q", status: "quarantined" }),
      makeSnapshot({ id: "driver", driverVersion: "535.00" }),
    ];
    const { feasible, infeasible } = enumerateStartOptions({
      endpoint,
      deployment,
      nodes,
      snapshots,
    });
    expect(feasible.some((o) => o.path === "restore")).toBe(false);
    const reason = infeasible.find((o) => o.path === "restore")?.reason;
    expect(reason).toContain("snapshot quarantined");
    expect(reason).toContain("driver 535.00 ≠ node 550.54");
  });

  it("respects the endpoint's allowed paths and the eStargz prerequisites", () => {
    const { feasible } = enumerateStartOptions({
      endpoint: { ...endpoint, allowedPaths: ["lazy", "pull"] },
      deployment: { ...deployment, estargzDigest: null },
      nodes: [makeNode()],
      snapshots: [makeSnapshot()],
    });
    expect(feasible.map((o) => o.path)).toEqual(["pull"]);
  });

  it("property: every node × path appears exactly once, feasible options fit the node", () => {
    const nodeArb = fc.record({
      id: fc.uuid(),
      state: fc.constantFrom("ready", "draining", "lost"),
      gpuModel: fc.constantFrom(L40S, "NVIDIA A10G"),
      gpuCount: fc.integer({ min: 1, max: 8 }),
      freeSeed: fc.integer({ min: 0, max: 8 }),
      driverVersion: fc.constantFrom("550.54", "535.00"),
      warm: fc.boolean(),
      local: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(nodeArb, { maxLength: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom("ready", "quarantined", "capturing"),
        (specs, gpusNeeded, status) => {
          const nodes = specs.map((s) =>
            makeNode({
              id: s.id,
              name: s.id,
              state: s.state,
              gpuModel: s.gpuModel,
              gpuCount: s.gpuCount,
              freeGpus: Math.min(s.freeSeed, s.gpuCount),
              driverVersion: s.driverVersion,
              idleWarmReplicas: s.warm
                ? [{ replicaId: `r-${s.id}`, deploymentId: deployment.id }]
                : [],
              localSnapshotIds: s.local ? ["snapshot-1"] : [],
            }),
          );
          const snapshots = [makeSnapshot({ status, inStore: false })];
          const e = { ...endpoint, gpuCount: gpusNeeded };
          const { feasible, infeasible } = enumerateStartOptions({
            endpoint: e,
            deployment,
            nodes,
            snapshots,
          });
          expect(feasible.length + infeasible.length).toBe(nodes.length * StartPath.options.length);
          for (const option of feasible) {
            const node = nodes.find((n) => n.id === option.nodeId)!;
            expect(node.state).toBe("ready");
            expect(node.gpuModel).toBe(L40S);
            expect(option.gpusToReserve).toBeLessThanOrEqual(node.freeGpus);
            expect(option.gpusToReserve).toBeLessThanOrEqual(node.gpuCount);
            if (option.path === "restore") {
              expect(status).toBe("ready");
              expect(node.driverVersion).toBe("550.54");
            }
          }
        },
      ),
    );
  });
});
