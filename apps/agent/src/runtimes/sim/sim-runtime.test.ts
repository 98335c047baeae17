import { randomUUID } from "node:crypto";
import { HOST_PROFILES, PHYSICS } from "@thaw/core/cold-start-model";
import { Phase } from "@thaw/core/vocabulary";
import {
  type HostFigures,
  type ReplicaSimulation,
  type StartReplicaRequestInput,
  StartReplicaRequest,
} from "@thaw/protocol";
import { describe, expect, it } from "vitest";
import { hostFiguresFor } from "../../sim/host-figures.ts";
import { type PhaseEvent, PhaseFailedError } from "../runtime.ts";
import { SimClock } from "./sim-clock.ts";
import { SimRuntime, type SimRuntimeOptions } from "./sim-runtime.ts";

// Time factor 1e6: a 300 s simulated pull waits 0.3 ms of wall time.
const FAST = new SimClock(1_000_000);

const simulation: ReplicaSimulation = {
  layers: [
    { bytes: 4_000_000_000, compression: "gzip-6", content: "weights" },
    { bytes: 1_000_000_000, compression: "gzip-6", content: "code" },
  ],
  readFraction: 0.9,
  engine: {
    weightsBytes: 4_000_000_000,
    loader: "sequential",
    loaderConcurrency: 1,
    initSeconds: 5,
    compileSeconds: 20,
    graphCaptureSeconds: 10,
    warmupSeconds: 5,
  },
};

function runtime(overrides: Partial<SimRuntimeOptions> = {}): SimRuntime {
  return new SimRuntime({
    profile: HOST_PROFILES["g5.xlarge"],
    figures: hostFiguresFor("g5.xlarge"),
    clock: FAST,
    seed: 42,
    ...overrides,
  });
}

function request(input: Partial<StartReplicaRequestInput> = {}): StartReplicaRequest {
  return StartReplicaRequest.parse({
    replicaId: randomUUID(),
    coldStartId: randomUUID(),
    path: "pull",
    gpus: [0],
    deployment: {
      deploymentId: "0b6f4c43-5a3e-4f0e-9d3b-2d0f1c1e0a01",
      imageRef: "ghcr.io/thaw/llama:v1",
      estargzImageRef: "ghcr.io/thaw/llama:v1-esgz",
      simulation,
    },
    readiness: { port: 8000, timeoutSeconds: 600 },
    ...input,
  });
}

async function start(sim: SimRuntime, req: StartReplicaRequest) {
  const events: PhaseEvent[] = [];
  await sim.startReplica(req, (event) => events.push(event));
  return events;
}

const order = (events: PhaseEvent[]) => events.map((e) => Phase.options.indexOf(e.phase));
const seconds = (events: PhaseEvent[], phase: string) =>
  events.find((e) => e.phase === phase)?.seconds ?? NaN;

const DIGEST = `sha256:${"e".repeat(64)}`;

describe("SimRuntime", () => {
  it("replays a pull in ARCHITECTURE.md §4 order, with bytes, ending ready", async () => {
    const events = await start(runtime(), request());
    expect(events.map((e) => e.phase)).toEqual([
      "pull",
      "create",
      "start",
      "load_weights",
      "compile",
      "graph_capture",
      "warmup",
      "ready",
    ]);
    expect(order(events)).toEqual([...order(events)].sort((a, b) => a - b));
    expect(events[0]).toMatchObject({
      bytes: 5_000_000_000,
      attributes: { cached: false, simulated: true },
    });
    expect(seconds(events, "load_weights")).toBeGreaterThan(0);
    expect(events.find((e) => e.phase === "load_weights")?.bytes).toBeGreaterThan(0);
    // Simulated durations are reported, not the (accelerated) wall time.
    expect(seconds(events, "pull")).toBeGreaterThan(20);
  });

  it("takes a start's registry credential, notes that one was given and never repeats it", async () => {
    const password = "sim-secret-password-8f2e";
    const events = await start(
      runtime(),
      request({ registryAuth: [{ registry: "ghcr.io", username: "thaw", password }] }),
    );
    expect(events.find((e) => e.phase === "pull")?.attributes).toMatchObject({
      registryCredential: true,
    });
    expect(JSON.stringify(events)).not.toContain(password);
    const anonymous = await start(runtime(), request());
    expect(anonymous.find((e) => e.phase === "pull")?.attributes).toMatchObject({
      registryCredential: false,
    });
  });

  it("has the right phases for each path", async () => {
    const sim = runtime();
    const lazy = await start(sim, request({ path: "lazy" }));
    expect(lazy.map((e) => e.phase)).toEqual([
      "prefetch",
      "create",
      "start",
      "load_weights",
      "compile",
      "graph_capture",
      "warmup",
      "ready",
    ]);
    const snapshotId = randomUUID();
    const restore = await start(
      sim,
      request({
        path: "restore",
        deployment: {
          imageRef: "ghcr.io/thaw/llama:v1",
          simulation,
          snapshot: {
            snapshotId,
            checkpointRef: `registry.internal/snap@${DIGEST}`,
            sleepLevel: 2,
          },
        },
      }),
    );
    // Not on this host yet: fetched from the snapshot store first.
    expect(restore.map((e) => e.phase)).toEqual([
      "fetch_snapshot",
      "restore",
      "load_weights",
      "warmup",
      "ready",
    ]);
    const parked = request();
    await start(sim, parked);
    await sim.parkReplica({ replicaId: parked.replicaId });
    const warm = await start(sim, request({ path: "warm", warmReplicaId: parked.replicaId }));
    expect(warm.map((e) => e.phase)).toEqual(["handover", "ready"]);
  });

  it("wakes a sleeping engine by the model's wake physics: weights back, no pull or compile", async () => {
    const sim = runtime();
    const sleep = async (level: 1 | 2) => {
      const first = request();
      await start(sim, first);
      await sim.parkReplica({
        replicaId: first.replicaId,
        gpus: "release",
        sleepLevel: level,
        engineSleep: { path: `/sleep?level=${level}` },
        engineWake: { path: "/wake_up" },
      });
      return first.replicaId;
    };
    const l1 = await sleep(1);
    expect((await sim.inventory()).replicas).toContainEqual(
      expect.objectContaining({ replicaId: l1, state: "sleeping" }),
    );
    const woken = await start(sim, request({ path: "wake", sleepingReplicaId: l1 }));
    expect(woken.map((e) => e.phase)).toEqual(["load_weights", "warmup", "ready"]);
    // g5.xlarge: 4 GB over PCIe Gen4 from pinned memory, well under a second or two.
    expect(seconds(woken, "load_weights")).toBeLessThan(2);
    // Level 2 dropped the weights: they are read again from the host's gp3 disk.
    const l2 = await sleep(2);
    const reloaded = await start(sim, request({ path: "wake", sleepingReplicaId: l2 }));
    expect(seconds(reloaded, "load_weights")).toBeGreaterThan(10 * seconds(woken, "load_weights"));
    await expect(
      sim.startReplica(request({ path: "wake", sleepingReplicaId: l1 }), () => undefined),
    ).rejects.toThrow(/no sleeping replica/);
  });

  it("makes the second pull of a cached image faster, and lists the image", async () => {
    const sim = runtime();
    const first = await start(sim, request());
    const second = await start(sim, request());
    expect(seconds(second, "pull")).toBeLessThan(seconds(first, "pull") / 100);
    expect(second[0]).toMatchObject({ bytes: 0, attributes: { cached: true } });
    // Compile caches persisted by the first start.
    expect(seconds(second, "compile")).toBeLessThan(seconds(first, "compile"));
    const inventory = await sim.inventory();
    expect(inventory.images).toEqual([
      expect.objectContaining({ bytes: 5_000_000_000, estargz: false }),
    ]);
  });

  it("keeps a restored snapshot local, so the next restore skips the fetch", async () => {
    const sim = runtime();
    const snapshotId = randomUUID();
    const restore = () =>
      request({
        path: "restore",
        deployment: {
          imageRef: "ghcr.io/thaw/llama:v1",
          simulation,
          snapshot: {
            snapshotId,
            checkpointRef: `registry.internal/snap@${DIGEST}`,
            sleepLevel: 2,
          },
        },
      });
    await start(sim, restore());
    expect((await sim.inventory()).snapshotIds).toEqual([snapshotId]);
    const again = await start(sim, restore());
    expect(again.map((e) => e.phase)).not.toContain("fetch_snapshot");
  });

  /** A level-2 restore of a new snapshot onto GPU 0 of a host of `instanceType` reporting `figures`. */
  const restoreOn = (
    instanceType: "p4d.24xlarge" | "g5.xlarge",
    figures: Partial<HostFigures>,
    snapshot: { stageWeights?: boolean } = {},
  ) =>
    start(
      runtime({
        profile: HOST_PROFILES[instanceType],
        figures: { ...hostFiguresFor(instanceType), ...figures },
      }),
      request({
        path: "restore",
        gpus: [0],
        deployment: {
          imageRef: "ghcr.io/thaw/llama:v1",
          simulation,
          snapshot: {
            snapshotId: randomUUID(),
            checkpointRef: `registry.internal/snap@${DIGEST}`,
            sleepLevel: 2,
            ...snapshot,
          },
        },
      }),
    );

  it("restores pages with the CRIU workers the host reports, as fast as where the pages are allows", async () => {
    const restoreSeconds = async (
      restoreStreams: number,
      instanceType: "p4d.24xlarge" | "g5.xlarge",
    ) => seconds(await restoreOn(instanceType, { restoreStreams }), "restore");
    // 16 GB/s of local NVMe: more workers restore the same pages faster (same seed, same noise).
    expect(await restoreSeconds(8, "p4d.24xlarge")).toBeLessThan(
      await restoreSeconds(1, "p4d.24xlarge"),
    );
    // On gp3 the fetch's writes bind (125 MiB/s); the 16 GiB host still holds the image it
    // just wrote, so CRIU reads its pages from memory, far faster than the fetch wrote them.
    const fetched = await restoreOn("g5.xlarge", { restoreStreams: 1 });
    expect(seconds(fetched, "fetch_snapshot")).toBeGreaterThan(5 * seconds(fetched, "restore"));
    expect(await restoreSeconds(8, "g5.xlarge")).toBeLessThanOrEqual(
      await restoreSeconds(1, "g5.xlarge"),
    );
  });

  it("loads a staged restore's weights into device memory on a host whose engines use a GPU Memory Service", async () => {
    const loadSeconds = async (gpuMemoryService: boolean) =>
      seconds(
        await restoreOn("p4d.24xlarge", { gpuMemoryService }, { stageWeights: true }),
        "load_weights",
      );
    // The engine maps what the loader put on the GPU during the restore instead of reloading.
    expect(await loadSeconds(true)).toBeLessThan((await loadSeconds(false)) / 2);
  });

  it("captures a snapshot: local afterwards, the replica stopped", async () => {
    const sim = runtime();
    const running = request();
    await start(sim, running);
    const snapshotId = randomUUID();
    const captured = await sim.captureSnapshot({
      replicaId: running.replicaId,
      snapshotId,
      checkpointRef: "registry.internal/snap:2",
      sleepLevel: 2,
      push: true,
    });
    expect(captured.seconds).toBeGreaterThan(1);
    expect(captured.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const inventory = await sim.inventory();
    expect(inventory.snapshotIds).toContain(snapshotId);
    expect(inventory.replicas).toEqual([]);

    // The held checkpoint restores by the digest its capture reported, and by no other.
    const restore = (digest: string) =>
      request({
        path: "restore",
        deployment: {
          imageRef: "ghcr.io/thaw/llama:v1",
          simulation,
          snapshot: {
            snapshotId,
            checkpointRef: `registry.internal/snap@${digest}`,
            sleepLevel: 2,
          },
        },
      });
    expect(sim.refusal(restore(captured.digest))).toBeUndefined();
    expect(sim.refusal(restore(DIGEST))).toBe(
      `snapshot ${snapshotId} on this host is ${captured.digest}, the start asks for ${DIGEST}`,
    );
  });

  it("lists parked replicas as warm", async () => {
    const sim = runtime();
    const req = request();
    await start(sim, req);
    await sim.parkReplica({ replicaId: req.replicaId });
    expect((await sim.inventory()).warmReplicaIds).toEqual([req.replicaId]);
  });

  it("fails a restore by injection: the restore phase, with the reason", async () => {
    const sim = runtime({ failures: { restoreFailureProbability: 1 } });
    const events: PhaseEvent[] = [];
    const failed = sim.startReplica(
      request({
        path: "restore",
        deployment: {
          imageRef: "ghcr.io/thaw/llama:v1",
          snapshot: {
            snapshotId: randomUUID(),
            checkpointRef: `registry.internal/snap@${DIGEST}`,
            sleepLevel: 2,
          },
        },
      }),
      (event) => events.push(event),
    );
    await expect(failed).rejects.toBeInstanceOf(PhaseFailedError);
    await expect(failed).rejects.toMatchObject({
      phase: "restore",
      message: expect.stringMatching(/criu restore failed/) as unknown as string,
    });
    expect(events.map((e) => e.phase)).toEqual(["fetch_snapshot"]);
    expect((await sim.inventory()).replicas).toEqual([]);
  });

  it("stalls a pull by injection", async () => {
    const sim = runtime({ failures: { pullStallProbability: 1 } });
    await expect(sim.startReplica(request(), () => undefined)).rejects.toMatchObject({
      phase: "pull",
      message: expect.stringMatching(/stalled/) as unknown as string,
    });
    // Nothing was cached by a failed pull.
    expect((await sim.inventory()).images).toEqual([]);
  });

  it("stops a start when aborted, naming the phase it was in", async () => {
    const sim = runtime({ clock: new SimClock(1) });
    const abort = new AbortController();
    const started = sim.startReplica(request(), () => undefined, { signal: abort.signal });
    setTimeout(() => abort.abort(new Error("agent shutting down")), 20);
    await expect(started).rejects.toMatchObject({
      phase: "pull",
      message: expect.stringMatching(/agent shutting down/) as unknown as string,
    });
  });

  it("accelerates waiting by the time factor but reports simulated seconds", async () => {
    const sim = runtime({ clock: new SimClock(10_000) });
    const t0 = performance.now();
    const events = await start(sim, request());
    const wallSeconds = (performance.now() - t0) / 1000;
    const simulated = events.reduce((sum, e) => sum + e.seconds, 0);
    expect(simulated).toBeGreaterThan(100);
    expect(wallSeconds).toBeLessThan(simulated / 100);
  });

  it("refuses what it cannot serve: lazy without stargz, a snapshot of another driver", () => {
    const sim = runtime({ estargz: false });
    expect(sim.capabilities().paths).toEqual(["warm", "wake", "restore", "peer", "pull"]);
    expect(sim.capabilities().reasons.lazy).toMatch(/stargz/);
    const foreign = request({
      path: "restore",
      deployment: {
        imageRef: "ghcr.io/thaw/llama:v1",
        simulation: {
          ...simulation,
          snapshot: { bytes: 1, reloadConcurrency: 1, driverVersion: "535.0" },
        },
        snapshot: {
          snapshotId: randomUUID(),
          checkpointRef: `registry.internal/snap@${DIGEST}`,
          sleepLevel: 2,
        },
      },
    });
    expect(sim.refusal(foreign)).toMatch(/driver 535.0 \(this host: 570/);
  });

  it("draws different noise per start but the same stream for the same seed", async () => {
    const a = await start(runtime(), request());
    const b = await start(runtime(), request());
    expect(a.map((e) => e.seconds)).toEqual(b.map((e) => e.seconds));
    const sim = runtime();
    await start(sim, request({ deployment: { imageRef: "ghcr.io/thaw/other:v1", simulation } }));
    const c = await start(sim, request());
    expect(seconds(c, "pull")).not.toEqual(seconds(a, "pull"));
  });

  it("replays a peer start: weights and kernel caches from the source, then compiles warm; a second one skips the pull", async () => {
    const sim = runtime();
    const peerSource = {
      replicaId: randomUUID(),
      nodeName: "sim-g5-xlarge-2",
      rdma: false,
    };
    const peerRequest = (simulationPeer = {}) =>
      request({
        path: "peer",
        peerSource,
        deployment: {
          deploymentId: "0b6f4c43-5a3e-4f0e-9d3b-2d0f1c1e0a01",
          imageRef: "ghcr.io/thaw/llama:v1",
          simulation: { ...simulation, peer: simulationPeer },
        },
      });
    const first = await start(sim, peerRequest({ sourceNetworkGbps: 10 }));
    expect(first.map((e) => e.phase)).toEqual([
      "pull",
      "create",
      "start",
      "peer_transfer",
      "fetch_kernel_cache",
      "compile",
      "graph_capture",
      "warmup",
      "ready",
    ]);
    const copy = first.find((e) => e.phase === "peer_transfer")!;
    expect(copy.bytes).toBe(4_000_000_000);
    expect(copy.attributes).toMatchObject({ rdma: false });
    // 10 Gbps at 90% goodput, after the NIXL setup (noise aside): the model's physics.
    const expected = PHYSICS.peerSetupSeconds + 4e9 / 1.125e9;
    expect(seconds(first, "peer_transfer") / expected).toBeGreaterThan(0.6);
    expect(seconds(first, "peer_transfer") / expected).toBeLessThan(1.6);
    // The source's kernel caches spare most of compile, against a first pull here.
    const pulled = await start(runtime({ seed: 7 }), request());
    expect(seconds(first, "compile")).toBeLessThan(seconds(pulled, "compile") / 3);
    // The image is on this host now: the next peer start resolves it and fetches nothing.
    const second = await start(sim, peerRequest({ sourceNetworkGbps: 10 }));
    expect(second[0]).toMatchObject({ phase: "pull", bytes: 0, attributes: { cached: true } });
    // A source sending three other copies gives this one a quarter of its interface.
    const shared = await start(
      runtime(),
      peerRequest({ sourceNetworkGbps: 10, sourceTransfersInFlight: 3 }),
    );
    expect(seconds(shared, "peer_transfer")).toBeGreaterThan(2.5 * seconds(first, "peer_transfer"));
  });

  describe("kernel-cache store", () => {
    const kernelCacheId = "5b0e1c7a-2f4d-4c1e-8a9b-3d2e1f0a9b8c";
    const fetch = { kernelCacheId, ref: `registry.internal/kernel-caches@${DIGEST}`, bytes: 400e6 };

    it("fetches a stored cache before compile, which then runs warm", async () => {
      // Two hosts of the same seed: the same noise draws, so the difference is the cache.
      const cold = await start(runtime(), request());
      const stored = await start(runtime(), request({ kernelCache: { fetch } }));
      expect(stored.map((e) => e.phase)).toEqual([
        "pull",
        "create",
        "start",
        "load_weights",
        "fetch_kernel_cache",
        "compile",
        "graph_capture",
        "warmup",
        "ready",
      ]);
      expect(order(stored)).toEqual([...order(stored)].sort((a, b) => a - b));
      const fetched = stored.find((e) => e.phase === "fetch_kernel_cache")!;
      expect(fetched).toMatchObject({ bytes: 400e6, attributes: { stored: true, kernelCacheId } });
      expect(fetched.seconds).toBeGreaterThan(0);
      expect(seconds(stored, "compile")).toBeLessThan(seconds(cold, "compile") / 3);
      expect(stored.find((e) => e.phase === "compile")?.attributes).toMatchObject({
        warmCaches: false,
        storedCache: true,
      });
      expect(cold.map((e) => e.phase)).not.toContain("fetch_kernel_cache");
    });

    it("skips the fetch where the host kept the deployment's caches from an earlier start", async () => {
      const sim = runtime();
      await start(sim, request());
      const again = await start(sim, request({ kernelCache: { fetch } }));
      expect(again.map((e) => e.phase)).not.toContain("fetch_kernel_cache");
      expect(again.find((e) => e.phase === "compile")?.attributes).toMatchObject({
        warmCaches: true,
        storedCache: false,
      });
    });

    it("captures a running replica's cache: a digest, after the pack and the push's modelled time", async () => {
      // The fast clock, noting every wait it is asked for.
      const slept: number[] = [];
      const clock = new (class extends SimClock {
        override sleep(simulatedSeconds: number, signal?: AbortSignal) {
          slept.push(simulatedSeconds);
          return super.sleep(simulatedSeconds, signal);
        }
      })(FAST.timeFactor);
      const sim = runtime({ clock });
      const running = request({
        kernelCache: {
          capture: { kernelCacheId, ref: "registry.internal/kernel-caches:llama-a10g" },
        },
      });
      await start(sim, running);
      slept.length = 0;
      const captured = await sim.captureKernelCache(
        running.replicaId,
        running,
        running.kernelCache!.capture!,
      );
      const bytes = PHYSICS.defaultKernelCacheBytes;
      const profile = HOST_PROFILES["g5.xlarge"];
      const modelled =
        bytes / (profile.disk.writeMiBps * 2 ** 20) +
        bytes / ((profile.registryNetworkGbps * 1e9) / 8);
      expect(captured.bytes).toBe(bytes);
      expect(captured.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      // One wait on the sim clock: the pack to local disk, then the push.
      expect(slept).toHaveLength(1);
      expect(slept[0]).toBeCloseTo(modelled, 6);
      expect(modelled).toBeGreaterThan(1);
      // The same capture on the same host names the same bytes; another ref does not.
      const again = await sim.captureKernelCache(running.replicaId, running, {
        kernelCacheId,
        ref: "registry.internal/kernel-caches:llama-a10g",
      });
      expect(again.digest).toBe(captured.digest);
      const other = await sim.captureKernelCache(running.replicaId, running, {
        kernelCacheId,
        ref: "registry.internal/kernel-caches:other",
      });
      expect(other.digest).not.toBe(captured.digest);
      await sim.stopReplica(running.replicaId);
      await expect(
        sim.captureKernelCache(running.replicaId, running, running.kernelCache!.capture!),
      ).rejects.toThrow(/is not running on this host/);
    });
  });

  it("restores a level-2 snapshot with its weights sent by a serving replica: peer_transfer, not load_weights", async () => {
    const fromPeer = await start(
      runtime(),
      request({
        path: "restore",
        gpus: [0],
        peerSource: { replicaId: randomUUID(), nodeName: "sim-g5-xlarge-2", rdma: false },
        deployment: {
          imageRef: "ghcr.io/thaw/llama:v1",
          simulation: { ...simulation, peer: { sourceNetworkGbps: 10 } },
          snapshot: {
            snapshotId: randomUUID(),
            checkpointRef: `registry.internal/snap@${DIGEST}`,
            sleepLevel: 2,
            // Ignored: the weights do not come from this host's files.
            stageWeights: true,
          },
        },
      }),
    );
    expect(fromPeer.map((e) => e.phase)).toEqual([
      "fetch_snapshot",
      "restore",
      "peer_transfer",
      "warmup",
      "ready",
    ]);
    const copy = fromPeer.find((e) => e.phase === "peer_transfer")!;
    expect(copy).toMatchObject({
      bytes: 4_000_000_000,
      attributes: { rdma: false, weightsFrom: "peer" },
    });
    const expected = PHYSICS.peerSetupSeconds + 4e9 / 1.125e9;
    expect(copy.seconds / expected).toBeGreaterThan(0.6);
    expect(copy.seconds / expected).toBeLessThan(1.6);
  });
});
