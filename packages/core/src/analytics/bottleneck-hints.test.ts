import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  HOST_PROFILES,
  PHYSICS,
  scenarioHostFromProfile,
  simulateColdStart,
  type ColdStartScenarioInput,
} from "../cold-start-model/index.ts";
import { Phase } from "../vocabulary/index.ts";
import { effectiveDiskFigures } from "../scheduling/effective-disk-figures.ts";
import { bottleneckHints, hostCeilings, type HostCeilings } from "./bottleneck-hints.ts";
import type { PhaseSample } from "./cold-start-sample.ts";

// The hints read phases the way the shared physics model produces them: each case simulates
// a start (no noise) with cold-start-model, then asks what bounds its phases.

const GB = 1e9;
const g6e = scenarioHostFromProfile(HOST_PROFILES["g6e.xlarge"]);
const GPT_OSS_LAYERS = [
  { bytes: 12 * GB, compression: "gzip-9" as const, content: "weights" as const },
  { bytes: 0.9 * GB, compression: "gzip-9" as const, content: "code" as const },
];
const ENGINE = {
  weightsBytes: 12 * GB,
  loader: "sequential" as const,
  loaderConcurrency: 1,
  initSeconds: 12,
  compileSeconds: 20,
  graphCaptureSeconds: 25,
  warmupSeconds: 10,
  warmCaches: false,
};

function simulated(scenario: Omit<ColdStartScenarioInput, "noise">): PhaseSample[] {
  return simulateColdStart({ ...scenario, noise: false }).phases.map((p) => ({
    phase: p.phase,
    seconds: p.seconds,
    bytes: p.bytes,
    throughputBps: p.seconds > 0 ? p.bytes / p.seconds : null,
    attributes: p.phase === "compile" ? { warmCaches: scenario.engine.warmCaches } : {},
  }));
}

function hostOf(h: typeof g6e): HostCeilings {
  return {
    vcpus: h.vcpus,
    networkGbps: h.networkGbps,
    diskWriteMiBps: h.diskWriteMiBps,
    diskReadMiBps: h.diskReadMiBps,
    pcieGBps: h.pcieGBps,
  };
}

const kinds = (hints: ReturnType<typeof bottleneckHints>, phase: Phase) =>
  hints.filter((h) => h.phase === phase).map((h) => h.bound);

describe("bottleneckHints", () => {
  it("a 13 GB gzip-9 image pulled onto gp3: one registry stream and the 125 MiB/s disk", () => {
    const phases = simulated({
      host: g6e,
      image: { format: "oci", layers: GPT_OSS_LAYERS, readFraction: 0.95 },
      engine: ENGINE,
      path: "pull",
    });
    const hints = bottleneckHints({
      path: "pull",
      phases,
      host: hostOf(g6e),
      imageLayers: GPT_OSS_LAYERS,
      engineProfile: { loader: "sequential", loaderConcurrency: 1 },
    });
    expect(kinds(hints, "pull")).toEqual(expect.arrayContaining(["registry_stream", "disk_write"]));
    const disk = hints.find((h) => h.bound === "disk_write")!;
    expect(disk.ceiling).toBe(125 * 1024 * 1024);
    expect(disk.measured).toBeLessThanOrEqual(disk.ceiling);
    expect(disk.text).toContain("disk-write bound at 125 MiB/s");
    // A faster disk does not help the single registry stream, and the network is far from full.
    expect(kinds(hints, "pull")).not.toContain("network");
  });

  it("names where the disk figure came from, and asks for gp3 throughput only below its ceiling", () => {
    const pulled = (diskMiBps: number) =>
      simulated({
        host: { ...g6e, diskWriteMiBps: diskMiBps, diskReadMiBps: diskMiBps },
        image: { format: "oci", layers: GPT_OSS_LAYERS, readFraction: 0.95 },
        engine: ENGINE,
        path: "pull",
      });
    const hintsOn = (node: Parameters<typeof hostCeilings>[0]) =>
      bottleneckHints({
        path: "pull",
        phases: pulled(effectiveDiskFigures(node).writeMiBps),
        host: hostCeilings(node),
        imageLayers: GPT_OSS_LAYERS,
        engineProfile: { loader: "sequential", loaderConcurrency: 1 },
      });
    const defaultDisk = {
      ...hostOf(g6e),
      volumeThroughputMiBps: null,
      measuredDiskReadMiBps: 125,
      measuredDiskWriteMiBps: 125,
    };
    const measured = hintsOn(defaultDisk).find((h) => h.bound === "disk_write")!;
    expect(measured.text).toContain("disk-write bound at 125 MiB/s (measured on the host)");
    expect(measured.text).toContain("provision gp3 throughput");
    const profile = hintsOn({ ...defaultDisk, measuredDiskReadMiBps: null });
    expect(profile.find((h) => h.bound === "disk_write")!.text).toContain(
      "125 MiB/s (instance profile)",
    );
    // The volume the fleet provider provisions: the disk is no longer what the pull waits on.
    const provisioned = hintsOn({
      ...defaultDisk,
      measuredDiskReadMiBps: null,
      volumeThroughputMiBps: 1000,
    });
    expect(kinds(provisioned, "pull")).not.toContain("disk_write");
  });

  it("a concurrent loader on the default disk is told to provision gp3 throughput", () => {
    const node = {
      ...hostOf(g6e),
      volumeThroughputMiBps: null,
      measuredDiskReadMiBps: 125,
      measuredDiskWriteMiBps: 125,
    };
    const engine = { ...ENGINE, loader: "concurrent" as const, loaderConcurrency: 16 };
    const hints = bottleneckHints({
      path: "pull",
      phases: simulated({
        host: g6e,
        image: { format: "oci", layers: GPT_OSS_LAYERS, readFraction: 0.95 },
        engine,
        path: "pull",
      }),
      host: hostCeilings(node),
      imageLayers: GPT_OSS_LAYERS,
      engineProfile: engine,
    });
    const read = hints.find((h) => h.bound === "disk_read")!;
    expect(read.text).toContain("disk-read bound at 125 MiB/s (measured on the host)");
    expect(read.text).toContain("provision gp3 throughput");
  });

  it("with the disk ceiling lifted, gzip-9 weights are decompression bound; at gzip-0 they are not", () => {
    const raid = { ...g6e, diskWriteMiBps: 4000, diskReadMiBps: 8000, diskReadStreamMiBps: 1000 };
    for (const compression of ["gzip-9", "gzip-0"] as const) {
      const layers = GPT_OSS_LAYERS.map((l) => ({ ...l, compression }));
      const phases = simulated({
        host: raid,
        image: { format: "oci", layers, readFraction: 0.95 },
        engine: ENGINE,
        path: "pull",
      });
      const hints = bottleneckHints({
        path: "pull",
        phases,
        host: hostOf(raid),
        imageLayers: layers,
        engineProfile: {},
      });
      if (compression === "gzip-9") {
        const hint = hints.find((h) => h.bound === "decompression")!;
        expect(hint.text).toMatch(/gzip level 0/);
        // One core inflates each layer in turn, at the model's gzip rate for its content.
        const inflate = PHYSICS.decompressBytesPerSecondPerCore["gzip-9"];
        expect(hint.ceiling).toBeCloseTo(
          (12.9 * GB) / ((12 * GB) / inflate.weights + (0.9 * GB) / inflate.code),
        );
      } else expect(kinds(hints, "pull")).not.toContain("decompression");
      expect(kinds(hints, "pull")).not.toContain("disk_write");
    }
  });

  it("load_weights: a sequential loader on a fast disk is loader bound; a concurrent one on gp3 is disk-read bound", () => {
    const nvme = { ...g6e, diskReadMiBps: 4000, diskWriteMiBps: 4000, diskReadStreamMiBps: 320 };
    const engine = { ...ENGINE, weightsBytes: 15 * GB };
    const image = {
      format: "oci" as const,
      layers: [{ bytes: 7.7 * GB, compression: "gzip-6" as const, content: "code" as const }],
      readFraction: 0.1,
    };
    const sequential = bottleneckHints({
      path: "pull",
      phases: simulated({ host: nvme, image, engine, path: "pull" }),
      host: hostOf(nvme),
      imageLayers: image.layers,
      engineProfile: { loader: "sequential", loaderConcurrency: 1 },
    });
    expect(kinds(sequential, "load_weights")).toEqual(["sequential_loader"]);
    expect(sequential.find((h) => h.phase === "load_weights")!.text).toMatch(/concurrent loader/);

    const concurrentEngine = { ...engine, loader: "concurrent" as const, loaderConcurrency: 16 };
    const concurrent = bottleneckHints({
      path: "pull",
      phases: simulated({ host: g6e, image, engine: concurrentEngine, path: "pull" }),
      host: hostOf(g6e),
      imageLayers: image.layers,
      engineProfile: { loader: "concurrent", loaderConcurrency: 16 },
    });
    expect(kinds(concurrent, "load_weights")).toEqual(["disk_read"]);
  });

  it("compile dominates with cold caches and is not named once caches are warm", () => {
    const base = {
      host: g6e,
      image: {
        format: "oci" as const,
        layers: [{ bytes: 1 * GB, compression: "gzip-6" as const, content: "code" as const }],
        readFraction: 0.5,
      },
      path: "pull" as const,
    };
    const engine = { ...ENGINE, weightsBytes: 1 * GB, compileSeconds: 60, graphCaptureSeconds: 40 };
    const cold = bottleneckHints({
      path: "pull",
      phases: simulated({ ...base, engine }),
      host: hostOf(g6e),
      imageLayers: base.image.layers,
      engineProfile: {},
    });
    const hint = cold.find((h) => h.bound === "compile")!;
    expect(hint.measured).toBeCloseTo(100);
    expect(hint.ceiling).toBeCloseTo(10);
    expect(hint.text).toMatch(/persist compile caches/);
    const warm = bottleneckHints({
      path: "pull",
      phases: simulated({ ...base, engine: { ...engine, warmCaches: true } }),
      host: hostOf(g6e),
      imageLayers: base.image.layers,
      engineProfile: {},
    });
    expect(kinds(warm, "compile")).toEqual([]);
  });

  describe("the kernel-cache store", () => {
    // A small image cached on the host: the start is the engine's own, compile-bound.
    const image = {
      format: "oci" as const,
      layers: [{ bytes: 2 * GB, compression: "gzip-6" as const, content: "code" as const }],
      readFraction: 0.5,
    };
    const engine = { ...ENGINE, weightsBytes: 2 * GB, compileSeconds: 60, graphCaptureSeconds: 40 };
    const storeHints = (phases: PhaseSample[]) =>
      bottleneckHints({
        path: "pull",
        phases,
        host: hostOf(g6e),
        imageLayers: image.layers,
        engineProfile: {},
      });
    const fetched = (kernelCacheBytes: number) =>
      simulated({
        host: g6e,
        image,
        engine,
        path: "pull",
        kernelCache: { bytes: kernelCacheBytes },
      });

    it("a long fetch from the store: one stream's rate, or a store far from the host", () => {
      const large = storeHints(fetched(8 * GB));
      expect(kinds(large, "fetch_kernel_cache")).toEqual(["network"]);
      const hint = large.find((h) => h.phase === "fetch_kernel_cache")!;
      expect(hint.ceiling).toBeCloseTo(PHYSICS.registryStreamBytesPerSecond);
      expect(hint.text).toContain("from the store");
      expect(hint.text).toContain("the cache is large for one stream");
      // The same bytes at a tenth of a stream's rate: the store is far away.
      const slow = fetched(8 * GB).map((p) =>
        p.phase === "fetch_kernel_cache" ? { ...p, seconds: (p.seconds ?? 0) * 10 } : p,
      );
      expect(storeHints(slow).find((h) => h.phase === "fetch_kernel_cache")!.text).toContain(
        "keep THAW_SNAPSHOT_REGISTRY in this host's region",
      );
      // The default cache (500 MB, ~10 s) next to this start is not named.
      expect(kinds(storeHints(fetched(500e6)), "fetch_kernel_cache")).toEqual([]);
    });

    it("a start that fetched the stored cache and still compiles long: the cache did not match", () => {
      const matched = fetched(500e6);
      expect(kinds(storeHints(matched), "compile")).toEqual([]);
      const recompiled = matched.map((p): PhaseSample =>
        p.phase === "compile"
          ? { ...p, seconds: engine.compileSeconds, attributes: { warmCaches: true } }
          : p.phase === "graph_capture"
            ? { ...p, seconds: engine.graphCaptureSeconds }
            : p,
      );
      const hint = storeHints(recompiled).find((h) => h.bound === "compile")!;
      expect(hint.text).toContain("although the stored kernel cache was fetched");
      expect(hint.text).toContain("keep the deployment's engine arguments and environment");
      // No cache stored: the usual advice, which names the store.
      const cold = simulated({ host: g6e, image, engine, path: "pull" });
      expect(storeHints(cold).find((h) => h.bound === "compile")!.text).toContain(
        "Thaw keeps them in its kernel-cache store when THAW_SNAPSHOT_REGISTRY is set",
      );
    });
  });

  describe("the peer path", () => {
    const image = { format: "estargz" as const, layers: GPT_OSS_LAYERS, readFraction: 0.95 };
    const peerHints = (peer: ColdStartScenarioInput["peer"], phases?: PhaseSample[]) =>
      bottleneckHints({
        path: "peer",
        phases: phases ?? simulated({ host: g6e, image, engine: ENGINE, path: "peer", peer }),
        host: hostOf(g6e),
        imageLayers: GPT_OSS_LAYERS,
        engineProfile: {},
      });
    /** g6e's 20 Gbps at the model's goodput: below what 8 TCP flows of 5 Gbps carry. */
    const tcpCeiling = (20e9 / 8) * PHYSICS.nicGoodputFraction;

    it("a copy from a source on a slower network dominates: the slower host's network, several flows or one placement group", () => {
      const hints = peerHints({ sourceNetworkGbps: 5 });
      expect(kinds(hints, "peer_transfer")).toEqual(["network"]);
      const hint = hints.find((h) => h.phase === "peer_transfer")!;
      expect(hint.ceiling).toBeCloseTo(tcpCeiling);
      expect(hint.measured).toBeLessThan(hint.ceiling / 2);
      // Everything but the copy's setup (finding the source, registering the weights' memory).
      expect(hint.attributedSeconds).toBeCloseTo(hint.phaseSeconds - PHYSICS.peerSetupSeconds);
      expect(hint.text).toContain("bound by the slower host's network");
      expect(hint.text).toContain("the source's");
      expect(hint.text).toContain("EFA (p4d, p5) copy GPU to GPU over RDMA");
      expect(hint.text).toContain(
        "a single flow is capped at 5 Gbps outside a cluster placement group",
      );
      expect(hint.text).toContain(
        "keep the copy on several flows or put the hosts in one placement group",
      );
      // A source as fast as this host: the copy is under a quarter of the start, not named.
      expect(kinds(peerHints({}), "peer_transfer")).toEqual([]);
    });

    it("a copy at this host's TCP ceiling names this host; one faster than TCP went over RDMA", () => {
      const copy = (seconds: number): PhaseSample => ({
        phase: "peer_transfer",
        seconds,
        bytes: 12 * GB,
        throughputBps: null,
        attributes: {},
      });
      const start: PhaseSample = { ...copy(5), phase: "start", bytes: null };
      const atCeiling = peerHints({}, [start, copy((1.1 * 12 * GB) / tcpCeiling)]);
      expect(atCeiling).toHaveLength(1);
      expect(atCeiling[0]!.text).toContain("(this host's TCP)");
      const rdma = peerHints({}, [start, copy(2)]);
      expect(rdma[0]!.measured).toBeGreaterThan(rdma[0]!.ceiling);
      expect(rdma[0]!.text).toContain("it went GPU to GPU over RDMA");
    });

    it("a long kernel-cache fetch: large caches near the link's ceiling, or a slow link", () => {
      const large = peerHints({ kernelCacheBytes: 40 * GB });
      expect(kinds(large, "fetch_kernel_cache")).toEqual(["network"]);
      const hint = large.find((h) => h.phase === "fetch_kernel_cache")!;
      expect(hint.measured).toBeGreaterThan(hint.ceiling / 2);
      expect(hint.attributedSeconds).toBe(hint.phaseSeconds);
      expect(hint.text).toContain("the caches are large");
      expect(hint.text).toMatch(/Triton, torch.compile, FlashInfer and DeepGEMM cache directories/);

      const slow = peerHints({ sourceNetworkGbps: 1, kernelCacheBytes: 20 * GB });
      const slowHint = slow.find((h) => h.phase === "fetch_kernel_cache")!;
      expect(slowHint.text).toContain("the link is slow");
      expect(slowHint.text).toContain("one cluster placement group");
      // The default caches (500 MB) at this host's rate are a fraction of a second.
      expect(kinds(peerHints({}), "fetch_kernel_cache")).toEqual([]);
    });

    it("a peer start that still compiles long: the source's caches did not match its engine arguments", () => {
      const matched = simulated({ host: g6e, image, engine: ENGINE, path: "peer", peer: {} });
      expect(kinds(peerHints({}, matched), "compile")).toEqual([]);
      // The caches arrived (the engine reports them warm) but it recompiled from cold.
      const recompiled = matched.map((p): PhaseSample =>
        p.phase === "compile"
          ? { ...p, seconds: ENGINE.compileSeconds, attributes: { warmCaches: true } }
          : p.phase === "graph_capture"
            ? { ...p, seconds: ENGINE.graphCaptureSeconds }
            : p,
      );
      const hint = peerHints({}, recompiled).find((h) => h.bound === "compile")!;
      expect(hint.measured).toBeCloseTo(ENGINE.compileSeconds + ENGINE.graphCaptureSeconds);
      expect(hint.text).toContain("although the serving replica sent its kernel caches");
      expect(hint.text).toContain("vLLM keys its torch.compile cache by its config");
      expect(hint.text).toContain("--max-model-len or --max-num-batched-tokens");
      expect(hint.text).toContain(
        "start the source and this replica with the same engine arguments",
      );
      // No caches were sent: the usual advice, not the mismatch.
      const uncached = recompiled
        .filter((p) => p.phase !== "fetch_kernel_cache")
        .map((p) => (p.phase === "compile" ? { ...p, attributes: { warmCaches: false } } : p));
      const usual = peerHints({}, uncached).find((h) => h.bound === "compile")!;
      expect(usual.text).toMatch(/persist compile caches/);
    });
  });

  it("a prefetch far below every ceiling is latency bound; a cached pull or an unknown host names nothing", () => {
    const slow: PhaseSample = {
      phase: "prefetch",
      seconds: 400,
      bytes: 4 * GB,
      throughputBps: 1e7,
      attributes: {},
    };
    const hints = bottleneckHints({
      path: "lazy",
      phases: [slow],
      host: hostOf(g6e),
      imageLayers: GPT_OSS_LAYERS,
      engineProfile: {},
    });
    expect(hints).toHaveLength(1);
    expect(hints[0]).toMatchObject({ phase: "prefetch", bound: "latency" });
    expect(hints[0]!.measured).toBeLessThan(hints[0]!.ceiling);
    expect(hints[0]!.text).toMatch(/prefetch chunk size/);

    const cached = { ...slow, phase: "pull" as const, attributes: { cached: true } };
    expect(
      bottleneckHints({
        path: "pull",
        phases: [cached],
        host: hostOf(g6e),
        imageLayers: [],
        engineProfile: {},
      }),
    ).toEqual([]);
    expect(
      bottleneckHints({
        path: "lazy",
        phases: [slow],
        host: null,
        imageLayers: [],
        engineProfile: {},
      }),
    ).toEqual([]);
  });

  it("never attributes more than a phase took, and orders hints by what they could save", () => {
    const phase = fc.record({
      phase: fc.constantFrom(...Phase.options),
      seconds: fc.option(fc.double({ min: 0, max: 2_000, noNaN: true }), { nil: null }),
      bytes: fc.option(fc.double({ min: 0, max: 50 * GB, noNaN: true }), { nil: null }),
      throughputBps: fc.constant(null),
      attributes: fc.record({ cached: fc.boolean(), warmCaches: fc.boolean() }),
    });
    const host = fc.record({
      vcpus: fc.integer({ min: 1, max: 192 }),
      networkGbps: fc.double({ min: 1, max: 400, noNaN: true }),
      diskWriteMiBps: fc.double({ min: 50, max: 20_000, noNaN: true }),
      diskReadMiBps: fc.double({ min: 50, max: 20_000, noNaN: true }),
      pcieGBps: fc.double({ min: 0, max: 64, noNaN: true }),
    });
    fc.assert(
      fc.property(fc.array(phase, { maxLength: 14 }), host, (phases, h) => {
        const hints = bottleneckHints({
          path: "pull",
          phases,
          host: h,
          imageLayers: GPT_OSS_LAYERS,
          engineProfile: { loader: "concurrent", loaderConcurrency: 8 },
        });
        for (const [i, hint] of hints.entries()) {
          expect(hint.attributedSeconds).toBeLessThanOrEqual(
            hint.bound === "compile" ? hint.measured : hint.phaseSeconds + 1e-9,
          );
          expect(hint.attributedSeconds).toBeGreaterThanOrEqual(0);
          expect(Number.isFinite(hint.measured) && Number.isFinite(hint.ceiling)).toBe(true);
          if (i > 0)
            expect(hint.attributedSeconds).toBeLessThanOrEqual(hints[i - 1]!.attributedSeconds);
        }
      }),
    );
  });
});
