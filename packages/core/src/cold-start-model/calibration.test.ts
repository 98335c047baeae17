import { describe, expect, it } from "vitest";
import { Phase } from "../vocabulary/index";
import {
  CALIBRATION_ROWS,
  GPT_OSS_JOURNEY,
  VLLM_ENGINE,
  comparedSeconds,
} from "./calibration-scenarios";
import { HOST_PROFILES, scenarioHostFromProfile } from "./host-profiles";
import { peerMountsEstargz } from "./peer-path";
import { restoreWeightsFromPeerPays } from "./restore-path";
import { PHYSICS } from "./physical-constants";
import {
  ColdStartResult,
  parseColdStartScenario,
  ScenarioPeer,
  type ColdStartScenarioInput,
} from "./scenario-schema";
import { simulateColdStart } from "./simulate-cold-start";
import { loadFidelitySuite } from "./fidelity/load-fidelity-suite";
import { predictCase } from "./fidelity/predict-case";
import { quantile } from "../statistics/quantile";

const TOLERANCE = 0.2;

describe("calibration: published cold starts reproduced with one set of constants", () => {
  it.each(CALIBRATION_ROWS.map((row) => [row.id, row] as const))("%s", (_id, row) => {
    const modelSeconds = comparedSeconds(row, simulateColdStart(row.scenario));
    expect(modelSeconds / row.targetSeconds).toBeGreaterThanOrEqual(1 - TOLERANCE);
    expect(modelSeconds / row.targetSeconds).toBeLessThanOrEqual(1 + TOLERANCE);
  });

  it("keeps the GPT-OSS journey's direction at every step the physics explains", () => {
    const [baseline, lazy, prefetch, fetchTimeout, createDeadline, chunks, gzip0, raid0] =
      GPT_OSS_JOURNEY.map((row) => simulateColdStart(row.scenario).totalSeconds);
    expect(lazy).toBeGreaterThan(baseline!);
    expect(prefetch).toBeLessThan(lazy!);
    expect(fetchTimeout).toBeLessThan(prefetch!);
    expect(createDeadline).toBeLessThan(fetchTimeout!);
    expect(chunks).toBeLessThan(createDeadline!);
    // The m6in's 125 MiB/s disk, not inflate on 8 cores, bounds both rows: the model keeps
    // them within a few percent (the published 40 s gain is not reproduced, see the report).
    expect(Math.abs(gzip0! / chunks! - 1)).toBeLessThan(0.03);
    expect(raid0).toBeLessThan(gzip0! / 3);
  });
});

// Published measurements the constants were not set by hand for (fidelity/cases): every
// case within ±25% under the production constants, except the ones the model cannot yet
// explain, each named with the physics it lacks. A named miss that starts to hold fails
// too, so the list only ever says what is true.
const FIDELITY_CASE_TOLERANCE = 0.25;
const KNOWN_FIDELITY_MISSES: Record<string, string> = {
  "ai-dynamo-snapshot/gpt-oss-120b":
    "MXFP4 MoE: its GPU state is not its weights' bytes (the case assumes it is)",
  "fastsafetensors/llama-2-7b-safetensors-nvme":
    "one reader of a local NVMe SSD: the single-reader rate is a host figure the source omits",
  "fastsafetensors/llama-2-13b-safetensors-nvme":
    "one reader of a local NVMe SSD: the single-reader rate is a host figure the source omits",
  "llm-d-gke-pod-snapshots/vllm-image-pull-without-streaming":
    "the node's disk and the image's unpacked size are not stated; the assumed ones bind",
  "llm-d-gke-pod-snapshots/qwen3-32b-safetensors-read-into-vram":
    "gVisor: file reads go through its gofer, far slower than a host page cache",
  "llm-d-gke-pod-snapshots/qwen3-32b-restore-from-gcs":
    "65.73 GiB in 8 s is 8.8 GB/s, past the assumed 25 Gbps NIC: pages restored on demand after PodRestored, or a faster path to GCS, which the source does not state",
  "serverlessllm/qwen3-32b-cached-safetensors":
    "page-cache reads on this H100 host run faster than the A100-era hosts the rate was fitted on",
  "serverlessllm/deepseek-r1-distill-qwen-32b-cached-safetensors":
    "page-cache reads on this H100 host run faster than the A100-era hosts the rate was fitted on",
  "tgi-zstd-layers/text-generation-inference-zstd-kubelet-pull":
    "zstd's unpacked size is assumed equal to gzip's; the gain the source measured is not bytes",
};

describe("calibration: the fidelity suite under the production constants", () => {
  const suite = loadFidelitySuite();

  it.each(suite.map((fidelityCase) => [fidelityCase.id, fidelityCase] as const))(
    "%s",
    (id, fidelityCase) => {
      const error = Math.abs(predictCase(fidelityCase).relativeError);
      if (id in KNOWN_FIDELITY_MISSES) expect(error).toBeGreaterThan(FIDELITY_CASE_TOLERANCE);
      else expect(error).toBeLessThanOrEqual(FIDELITY_CASE_TOLERANCE);
    },
  );

  it("names only cases that exist", () => {
    const ids = new Set(suite.map((fidelityCase) => fidelityCase.id));
    expect(Object.keys(KNOWN_FIDELITY_MISSES).filter((id) => !ids.has(id))).toEqual([]);
  });

  it("keeps the median |error| over the whole suite within 15%", () => {
    const errors = suite.map((fidelityCase) => Math.abs(predictCase(fidelityCase).relativeError));
    expect(quantile(errors, 0.5)).toBeLessThanOrEqual(0.15);
  });
});

// A 13 GB LLM image on a GPU host, the shape every mechanism test varies.
const gpuHost = scenarioHostFromProfile(HOST_PROFILES["g5.xlarge"]);
const baseScenario = {
  seed: 7,
  noise: false,
  host: gpuHost,
  image: {
    format: "estargz",
    layers: [
      { bytes: 12_000_000_000, compression: "gzip-9", content: "weights" },
      { bytes: 1_000_000_000, compression: "gzip-9", content: "code" },
    ],
    readFraction: 0.9,
  },
  engine: {
    weightsBytes: 11_000_000_000,
    loader: "sequential",
    loaderConcurrency: 1,
    initSeconds: 8,
    compileSeconds: 20,
    graphCaptureSeconds: 15,
    warmupSeconds: 10,
    warmCaches: false,
  },
  path: "pull",
} satisfies ColdStartScenarioInput;

type Scenario = ColdStartScenarioInput;
const total = (scenario: Scenario) => simulateColdStart(scenario).totalSeconds;
const withHost = (scenario: Scenario, host: Partial<Scenario["host"]>): Scenario => ({
  ...scenario,
  host: { ...scenario.host, ...host },
});
const withCompression = (scenario: Scenario, compression: "gzip-9" | "gzip-0"): Scenario => ({
  ...scenario,
  image: {
    ...scenario.image,
    layers: scenario.image.layers.map((layer) => ({ ...layer, compression })),
  },
});
const tunedLazy: Scenario = {
  ...baseScenario,
  path: "lazy",
  lazy: {
    prefetchChunkBytes: 32 * 1024 * 1024,
    maxCacheFds: 100,
    prefetchTimeoutSeconds: 300,
    fetchTimeoutSeconds: 300,
    createDeadlineSeconds: 300,
  },
};
const restoreScenario = (restore: Scenario["restore"]): Scenario => ({
  ...baseScenario,
  path: "restore",
  restore,
});

describe("mechanisms", () => {
  it("never gets slower with more disk bandwidth", () => {
    const scenarios: Scenario[] = [
      baseScenario,
      { ...baseScenario, path: "lazy" },
      tunedLazy,
      restoreScenario({ local: false, sleepLevel: 2, reloadConcurrency: 8 }),
    ];
    for (const scenario of scenarios) {
      let previous = Number.POSITIVE_INFINITY;
      for (const mibps of [60, 125, 250, 500, 1000, 2000, 4000, 8000]) {
        const seconds = total(withHost(scenario, { diskWriteMiBps: mibps, diskReadMiBps: mibps }));
        expect(seconds).toBeLessThanOrEqual(previous + 1e-9);
        previous = seconds;
      }
    }
  });

  it("never gets slower with more network bandwidth or fewer round-trip milliseconds", () => {
    for (const scenario of [
      baseScenario,
      { ...baseScenario, path: "lazy" } as Scenario,
      tunedLazy,
    ]) {
      let previous = Number.POSITIVE_INFINITY;
      for (const networkGbps of [1, 5, 10, 25, 100]) {
        const seconds = total(withHost(scenario, { networkGbps }));
        expect(seconds).toBeLessThanOrEqual(previous + 1e-9);
        previous = seconds;
      }
      expect(total(withHost(scenario, { registryRttMs: 1 }))).toBeLessThanOrEqual(
        total(withHost(scenario, { registryRttMs: 20 })),
      );
    }
  });

  it("pulls gzip-0 faster than gzip-9 where decompression is the bottleneck", () => {
    // Local NVMe and 100 Gbps: one core inflating the 12 GB weights layer is what remains.
    const fastHost = withHost(baseScenario, scenarioHostFromProfile(HOST_PROFILES["p4d.24xlarge"]));
    expect(total(withCompression(fastHost, "gzip-0"))).toBeLessThan(
      total(withCompression(fastHost, "gzip-9")) * 0.9,
    );
    // eStargz spreads inflate over cores: a 4-vCPU host with fast disk is still CPU bound.
    const fewCores = withHost(tunedLazy, {
      vcpus: 2,
      diskWriteMiBps: 4000,
      diskReadMiBps: 4000,
      diskReadStreamMiBps: 2000,
      networkGbps: 25,
    });
    expect(total(withCompression(fewCores, "gzip-0"))).toBeLessThan(
      total(withCompression(fewCores, "gzip-9")),
    );
  });

  it("leaves gzip level irrelevant when the disk is the bottleneck", () => {
    const slowDisk = tunedLazy;
    const ratio =
      total(withCompression(slowDisk, "gzip-9")) / total(withCompression(slowDisk, "gzip-0"));
    expect(ratio).toBeGreaterThan(0.95);
    expect(ratio).toBeLessThan(1.05);
  });

  it("restores a local snapshot faster than one fetched from the store", () => {
    for (const sleepLevel of [0, 1, 2] as const) {
      const local = total(restoreScenario({ local: true, sleepLevel }));
      const remote = simulateColdStart(restoreScenario({ local: false, sleepLevel }));
      expect(remote.phases.map((timing) => timing.phase)).toContain("fetch_snapshot");
      expect(local).toBeLessThan(remote.totalSeconds);
    }
  });

  it("streams a fetched image into memory without the disk's two passes, bound by the network", () => {
    const phasesOf = (imageSource: "disk" | "stream", host: Scenario["host"]) =>
      simulateColdStart({
        ...restoreScenario({ local: false, sleepLevel: 2, snapshotBytes: 20e9, imageSource }),
        host,
      }).phases;
    const seconds = (phases: ReturnType<typeof phasesOf>, phase: string) =>
      phases.find((timing) => timing.phase === phase)!.seconds;
    // gp3 (125 MiB/s): written, then read back, against one pass over the network.
    const onDisk = phasesOf("disk", gpuHost);
    const streamed = phasesOf("stream", gpuHost);
    expect(seconds(streamed, "fetch_snapshot") + seconds(streamed, "restore")).toBeLessThan(
      (seconds(onDisk, "fetch_snapshot") + seconds(onDisk, "restore")) / 2,
    );
    // The pages arrived with the fetch: the restore is CRIU's fixed cost and the toggle.
    expect(seconds(streamed, "restore")).toBeCloseTo(
      PHYSICS.criuBaseSeconds + PHYSICS.cudaToggleSeconds,
      6,
    );
    // A slower network makes the streamed fetch slower.
    const slowNetwork = phasesOf("stream", { ...gpuHost, networkGbps: 1 });
    expect(seconds(slowNetwork, "fetch_snapshot")).toBeGreaterThan(
      seconds(streamed, "fetch_snapshot"),
    );
  });

  it("starts faster with warm compile caches", () => {
    for (const path of ["pull", "lazy"] as const) {
      const cold = total({ ...baseScenario, path });
      const warm = total({
        ...baseScenario,
        path,
        engine: { ...baseScenario.engine, warmCaches: true },
      });
      expect(warm).toBeLessThan(cold);
    }
  });

  it("reloads weights faster with more reader threads, up to the device ceiling", () => {
    const nvme = scenarioHostFromProfile(HOST_PROFILES["p4d.24xlarge"]);
    const reload = (reloadConcurrency: number) =>
      total({ ...restoreScenario({ local: true, sleepLevel: 2, reloadConcurrency }), host: nvme });
    expect(reload(8)).toBeLessThan(reload(1));
    expect(reload(64)).toBeLessThanOrEqual(reload(8));
  });

  it("restores pages faster with more CRIU workers until where the pages are binds", () => {
    const nvme = scenarioHostFromProfile(HOST_PROFILES["p4d.24xlarge"]);
    const restoreWith = (restoreStreams: number, imageSource: "disk" | "page-cache") =>
      simulateColdStart({
        ...restoreScenario({ local: true, sleepLevel: 0, snapshotBytes: 20e9, imageSource }),
        host: { ...nvme, restoreStreams },
      }).phases.find((timing) => timing.phase === "restore")!.seconds;
    for (const source of ["disk", "page-cache"] as const) {
      expect(restoreWith(4, source)).toBeLessThan(restoreWith(1, source));
      // Past the source's ceiling more workers change nothing.
      expect(restoreWith(64, source)).toBeCloseTo(restoreWith(32, source), 6);
    }
    // Cached pages are never slower than the device; on gp3 they are much faster.
    expect(restoreWith(64, "page-cache")).toBeLessThanOrEqual(restoreWith(64, "disk"));
    const gp3 = (imageSource: "disk" | "page-cache") =>
      total({ ...restoreScenario({ local: true, sleepLevel: 2, imageSource }), host: gpuHost });
    expect(gp3("page-cache")).toBeLessThan(gp3("disk"));
  });

  it("hides most of a single-reader weight reload behind the restore when the weights are staged apart", () => {
    const fast = withHost(baseScenario, { diskReadMiBps: 1000, diskWriteMiBps: 1000 });
    const level2 = (stageWeights: boolean) =>
      simulateColdStart({
        ...fast,
        path: "restore",
        restore: { local: true, sleepLevel: 2, reloadConcurrency: 1, stageWeights },
      });
    const staged = level2(true);
    const unstaged = level2(false);
    expect(staged.totalSeconds).toBeLessThan(unstaged.totalSeconds / 1.5);
    // The restore itself is the same; staging only moves where the reload reads from.
    const restoreOf = (r: typeof staged) => r.phases.find((t) => t.phase === "restore")!.seconds;
    expect(restoreOf(staged)).toBe(restoreOf(unstaged));
    // Staging never beats the device: image and weights still cross it once.
    const deviceSeconds = (3_400_000_000 + fast.engine.weightsBytes) / (1000 * 1024 * 1024);
    expect(staged.totalSeconds).toBeGreaterThan(deviceSeconds);
    // Weights already in the page cache leave nothing to stage.
    const cachedEngine = { ...fast.engine, weightsSource: "page-cache" as const };
    const cached = (stageWeights: boolean) =>
      total({
        ...fast,
        engine: cachedEngine,
        path: "restore",
        restore: { local: true, sleepLevel: 2, reloadConcurrency: 1, stageWeights },
      });
    expect(cached(true)).toBeCloseTo(cached(false), 6);
  });

  it("loads staged weights into device memory during the restore on a GPU Memory Service host, leaving the engine only the mapping", () => {
    const fast = withHost(baseScenario, { diskReadMiBps: 1000, diskWriteMiBps: 1000 });
    const restore = {
      local: true,
      sleepLevel: 2 as const,
      reloadConcurrency: 1,
      stageWeights: true,
      imageSource: "page-cache" as const,
    };
    const cachedEngine = { ...fast.engine, weightsSource: "page-cache" as const };
    const run = (gpuMemoryService: boolean) =>
      simulateColdStart({
        ...fast,
        host: { ...fast.host, restoreStreams: 4, gpuMemoryService },
        engine: cachedEngine,
        path: "restore",
        restore,
      });
    const phase = (r: ReturnType<typeof run>, name: string) =>
      r.phases.find((t) => t.phase === name)!.seconds;
    const gms = run(true);
    const pageCache = run(false);
    // The restore is the same; the engine's reload from memory is replaced by the loader's
    // tail past the restore plus the mapping of what it loaded.
    expect(phase(gms, "restore")).toBe(phase(pageCache, "restore"));
    expect(phase(gms, "load_weights")).toBeLessThan(phase(pageCache, "load_weights") / 3);
    const remapSeconds = cachedEngine.weightsBytes / PHYSICS.deviceRemapBytesPerSecond;
    expect(phase(gms, "load_weights")).toBeGreaterThanOrEqual(remapSeconds);
    // From the disk, the loader and CRIU's reads share the device: it still binds.
    const fromDisk = simulateColdStart({
      ...fast,
      host: { ...fast.host, gpuMemoryService: true },
      path: "restore",
      restore: { ...restore, imageSource: "disk" },
    });
    const deviceSeconds = (3_400_000_000 + fast.engine.weightsBytes) / (1000 * 1024 * 1024);
    expect(fromDisk.totalSeconds).toBeGreaterThan(deviceSeconds);
  });

  // The field notes' "CRIU restore with GPU state ... slower than relaunching with warm
  // caches (cuda-checkpoint restores ~12 GB of GPU state slowly)" is contradicted by NVIDIA
  // Dynamo's measurements on current drivers (fidelity suite, ai-dynamo-snapshot): the
  // cuda-checkpoint stage moves 16-145 GB at 6-8 GB/s. The model follows the measurement.
  it("makes a sleep-level-0 restore (12 GB of GPU state) faster than relaunching with warm caches, as Dynamo measured", () => {
    const [, warmCaches] = VLLM_ENGINE;
    const relaunch = comparedSeconds(warmCaches!, simulateColdStart(warmCaches!.scenario));
    const fullRestore = total({
      ...warmCaches!.scenario,
      path: "restore",
      restore: { snapshotBytes: 15_400_000_000, local: true, sleepLevel: 0 },
    });
    expect(fullRestore).toBeLessThan(relaunch / 2);
  });

  it("makes lazy pulling pay off when the engine reads a small part of the image, and cost when it reads most of it", () => {
    const smallWorkingSet: Scenario = {
      ...tunedLazy,
      image: { ...tunedLazy.image, readFraction: 0.05 },
      engine: { ...tunedLazy.engine, weightsBytes: 0 },
    };
    expect(total(smallWorkingSet)).toBeLessThan(
      total({
        ...smallWorkingSet,
        image: { ...smallWorkingSet.image, format: "oci" },
        path: "pull",
      }),
    );
    const [baseline, lazyNoPrefetch] = GPT_OSS_JOURNEY;
    expect(total(lazyNoPrefetch!.scenario)).toBeGreaterThan(total(baseline!.scenario));
  });

  it("reads what the start wrote back from the page cache when the host's memory holds it all, else from the device", () => {
    // Issue 16's example: a fully tuned eStargz start of a ~2 GB model image on a GPU host
    // with 1,000 MiB/s disks. Its prefetch completes; the weights it wrote are then read back.
    const small: Scenario = {
      ...tunedLazy,
      host: { ...gpuHost, diskReadMiBps: 1000, diskWriteMiBps: 1000 },
      image: {
        format: "estargz",
        layers: [
          { bytes: 1_700_000_000, compression: "gzip-0", content: "weights" },
          { bytes: 300_000_000, compression: "gzip-0", content: "code" },
        ],
        readFraction: 0.95,
      },
      engine: { ...baseScenario.engine, weightsBytes: 1_700_000_000 },
    };
    const loadSeconds = (scenario: Scenario, memoryGiB: number) =>
      simulateColdStart(withHost(scenario, { memoryGiB })).phases.find(
        (timing) => timing.phase === "load_weights",
      )!.seconds;
    for (const path of ["lazy", "pull"] as const) {
      const scenario: Scenario = {
        ...small,
        path,
        image: { ...small.image, format: path === "lazy" ? "estargz" : "oci" },
      };
      // 32 GiB holds the ~4 GB written (two copies of each layer) beside the engine: the
      // weights come back faster than the disk could give them.
      const cached = loadSeconds(scenario, 32);
      expect(1.7e9 / cached).toBeGreaterThan(1000 * 1024 * 1024);
      // 4 GiB does not: one reader of the device (320 MiB/s by default), as before.
      const evicted = loadSeconds(scenario, 4);
      expect(evicted).toBeGreaterThan(2 * cached);
      expect(1.7e9 / evicted).toBeLessThan(330 * 1024 * 1024);
    }
    // A host without a GPU keeps the weights it loads in the same memory: 8 GiB holds the
    // start's writes and the engine's process, but not those and the weights too.
    const cpuOnly: Scenario = { ...small, path: "pull", image: { ...small.image, format: "oci" } };
    const onCpuHost = (memoryGiB: number) =>
      loadSeconds(withHost(cpuOnly, { pcieGBps: 0 }), memoryGiB);
    expect(loadSeconds(cpuOnly, 8)).toBeLessThan(loadSeconds(cpuOnly, 4));
    expect(onCpuHost(8)).toBeGreaterThan(2 * onCpuHost(16));
  });

  it("restores the pages of an image fetched moments ago from the page cache when it fits beside the restored process", () => {
    const restoreSeconds = (memoryGiB: number) =>
      simulateColdStart(
        withHost(restoreScenario({ local: false, sleepLevel: 2, snapshotBytes: 3.4e9 }), {
          memoryGiB,
        }),
      ).phases.find((timing) => timing.phase === "restore")!.seconds;
    // 16 GiB holds the 3.4 GB image twice (cached, and restored into the process): CRIU's
    // one worker copies at its own rate instead of reading gp3's 125 MiB/s.
    expect(restoreSeconds(16)).toBeLessThan(restoreSeconds(4) / 5);
    expect(restoreSeconds(4)).toBeGreaterThan(3.4e9 / (125 * 1024 * 1024));
  });

  it("hands a warm replica over in well under a second", () => {
    const result = simulateColdStart({ ...baseScenario, path: "warm" });
    expect(result.phases.map((timing) => timing.phase)).toEqual(["handover", "ready"]);
    expect(result.totalSeconds).toBeLessThan(1);
  });
});

describe("output shape", () => {
  const paths = ["pull", "lazy", "restore", "warm"] as const;

  it.each(paths)(
    "%s: phases in ARCHITECTURE.md §4 order, a zero-length ready marker, total = sum",
    (path) => {
      const result = simulateColdStart({ ...baseScenario, path, noise: true });
      expect(ColdStartResult.parse(result)).toEqual(result);
      const order = result.phases.map((timing) => Phase.options.indexOf(timing.phase));
      expect(order).toEqual([...order].sort((a, b) => a - b));
      expect(new Set(order).size).toBe(order.length);
      expect(result.phases.at(-1)).toEqual({ phase: "ready", seconds: 0, bytes: 0 });
      const sum = result.phases.reduce((acc, timing) => acc + timing.seconds, 0);
      expect(result.totalSeconds).toBeCloseTo(sum, 6);
    },
  );

  it("reports bytes where they move", () => {
    const pull = simulateColdStart(baseScenario);
    expect(pull.phases.find((timing) => timing.phase === "pull")?.bytes).toBe(13_000_000_000);
    expect(pull.phases.find((timing) => timing.phase === "load_weights")?.bytes).toBe(
      11_000_000_000,
    );
    expect(pull.phases.find((timing) => timing.phase === "create")?.bytes).toBe(0);
  });
});

describe("noise", () => {
  it("is deterministic for a seed", () => {
    const noisy: Scenario = { ...baseScenario, noise: true, seed: 42 };
    expect(simulateColdStart(noisy)).toEqual(simulateColdStart(noisy));
    expect(simulateColdStart(noisy)).not.toEqual(simulateColdStart({ ...noisy, seed: 43 }));
  });

  it("is on by default and moves each phase by a bounded factor", () => {
    const { noise: _noise, ...defaultNoise } = baseScenario;
    const quiet = simulateColdStart(baseScenario);
    for (const seed of [1, 2, 3, 4, 5, 99, 12345]) {
      const noisy = simulateColdStart({ ...defaultNoise, seed });
      expect(noisy.totalSeconds).not.toBe(quiet.totalSeconds);
      noisy.phases.forEach((timing, index) => {
        const base = quiet.phases[index]!;
        expect(timing.phase).toBe(base.phase);
        if (base.seconds === 0) return expect(timing.seconds).toBe(0);
        const bound =
          Math.exp(PHYSICS.noiseSigmaByPhase[timing.phase] * PHYSICS.noiseClampSigmas) * 1.0001;
        expect(timing.seconds / base.seconds).toBeLessThanOrEqual(bound);
        expect(timing.seconds / base.seconds).toBeGreaterThanOrEqual(1 / bound);
      });
    }
  });
});

describe("failure injection", () => {
  it("fails the restore phase with a message and no ready marker", () => {
    const result = simulateColdStart(restoreScenario({ local: false }), {
      restoreFailureProbability: 1,
    });
    expect(result.failure?.phase).toBe("restore");
    expect(result.failure?.message).toMatch(/criu restore failed/);
    expect(result.phases.at(-1)?.phase).toBe("restore");
    expect(result.phases.map((timing) => timing.phase)).not.toContain("ready");
  });

  it("stalls a pull until containerd's progress timeout cancels it", () => {
    const clean = simulateColdStart(baseScenario);
    const stalled = simulateColdStart(baseScenario, { pullStallProbability: 1 });
    expect(stalled.failure?.phase).toBe("pull");
    expect(stalled.phases).toHaveLength(1);
    expect(stalled.totalSeconds).toBeGreaterThanOrEqual(PHYSICS.pullStallSeconds);
    expect(stalled.totalSeconds).toBeLessThanOrEqual(
      clean.phases[0]!.seconds + PHYSICS.pullStallSeconds,
    );
    expect(
      simulateColdStart({ ...baseScenario, path: "lazy" }, { pullStallProbability: 1 }).failure
        ?.phase,
    ).toBe("prefetch");
  });

  it("never fails at probability 0 and ignores failures of phases the path does not have", () => {
    expect(
      simulateColdStart(baseScenario, { restoreFailureProbability: 1, pullStallProbability: 0 })
        .failure,
    ).toBeUndefined();
  });
});

describe("scenario schema", () => {
  it("applies the documented defaults", () => {
    const { seed: _seed, noise: _noise, ...minimal } = baseScenario;
    const parsed = parseColdStartScenario({ ...minimal, path: "lazy" });
    expect(parsed.seed).toBe(1);
    expect(parsed.noise).toBe(true);
    expect(parsed.lazy).toEqual({
      prefetch: true,
      prefetchChunkBytes: 0,
      lazyChunkBytes: 50_000,
      prefetchTimeoutSeconds: 10,
      fetchTimeoutSeconds: 30,
      createDeadlineSeconds: 120,
      maxCacheFds: 10,
    });
    expect(parsed.restore).toEqual({
      snapshotBytes: 3_400_000_000,
      local: true,
      sleepLevel: 2,
      reloadConcurrency: 1,
      hostBackup: "pageable",
      imageSource: "disk",
      stageWeights: false,
      stagingReaders: 8,
      weightsFrom: "local",
    });
    expect(
      parseColdStartScenario({ ...minimal, lazy: { maxCacheFds: 100 } }).lazy.fetchTimeoutSeconds,
    ).toBe(30);
  });

  it.each([
    ["scenario.bogus", { ...baseScenario, bogus: 1 }],
    ["scenario.host.diskSpeed", { ...baseScenario, host: { ...baseScenario.host, diskSpeed: 1 } }],
    [
      "scenario.image.layers.0.level",
      {
        ...baseScenario,
        image: { ...baseScenario.image, layers: [{ ...baseScenario.image.layers[0], level: 9 }] },
      },
    ],
    ["scenario.lazy.prefetchTimeout", { ...baseScenario, lazy: { prefetchTimeout: 30 } }],
    ["scenario.restore.sleep", { ...baseScenario, restore: { sleep: 2 } }],
  ])("rejects an unknown field and names it: %s", (field, input) => {
    expect(() => parseColdStartScenario(input)).toThrow(field);
  });

  it("names the field of a wrong value", () => {
    expect(() =>
      parseColdStartScenario({ ...baseScenario, host: { ...baseScenario.host, vcpus: "8" } }),
    ).toThrow("scenario.host.vcpus");
    expect(() =>
      parseColdStartScenario({
        ...baseScenario,
        image: {
          ...baseScenario.image,
          layers: [{ ...baseScenario.image.layers[0], compression: "brotli" }],
        },
      }),
    ).toThrow("scenario.image.layers.0.compression");
  });

  it("refuses a lazy start of a plain OCI image", () => {
    expect(() =>
      parseColdStartScenario({
        ...baseScenario,
        image: { ...baseScenario.image, format: "oci" },
        path: "lazy",
      }),
    ).toThrow("scenario.image.format");
  });
});

// An 8B model in bf16 (16 GB of weights outside the image, on the node's gp3 disk) on one L40S
// host, issue 20's target host; the image is the 9 GB engine without weights; its engine
// compile-bound as vLLM's is.
const l40s = scenarioHostFromProfile(HOST_PROFILES["g6e.xlarge"]);
const eightB: Scenario = {
  seed: 3,
  noise: false,
  host: l40s,
  image: {
    format: "oci",
    layers: [{ bytes: 9_000_000_000, compression: "gzip-6", content: "code" }],
    readFraction: 0.1,
  },
  engine: {
    weightsBytes: 16_000_000_000,
    loader: "sequential",
    loaderConcurrency: 1,
    initSeconds: 10,
    compileSeconds: 40,
    graphCaptureSeconds: 15,
    warmupSeconds: 3,
    warmCaches: false,
  },
  path: "pull",
};

describe("peer: weights and kernel caches copied from a serving replica", () => {
  const p5 = scenarioHostFromProfile(HOST_PROFILES["p5.48xlarge"]);
  const phaseSeconds = (scenario: Scenario, phase: string) =>
    simulateColdStart(scenario).phases.find((timing) => timing.phase === phase)?.seconds ?? 0;

  it("replaces the weight load by the copy, bound by the slower host's interface over TCP", () => {
    const peer: Scenario = { ...eightB, path: "peer", peer: { sourceNetworkGbps: 20 } };
    const phases = simulateColdStart(peer).phases.map((timing) => timing.phase);
    expect(phases).toEqual([
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
    // 20 Gbps at 90% goodput is 2.25 GB/s, under 8 flows of 5 Gbps: 16 GB in ~7.1 s + setup.
    const copy = phaseSeconds(peer, "peer_transfer");
    expect(copy).toBeCloseTo(PHYSICS.peerSetupSeconds + 16e9 / 2.25e9, 1);
    // From the gp3 disk one reader gets the 125 MiB/s ceiling: two minutes.
    expect(phaseSeconds(eightB, "load_weights")).toBeGreaterThan(10 * copy);
    // A source sending two other copies gives this one a third of its interface.
    const shared = phaseSeconds(
      { ...peer, peer: { sourceNetworkGbps: 20, sourceTransfersInFlight: 2 } },
      "peer_transfer",
    );
    expect(shared - PHYSICS.peerSetupSeconds).toBeCloseTo(3 * (copy - PHYSICS.peerSetupSeconds), 1);
  });

  it("copies GPU to GPU over each GPU's RDMA rail where both hosts have one, else over TCP", () => {
    const onP5 = (sourceRdmaGbps: number, gpus: number): Scenario => ({
      ...eightB,
      host: p5,
      path: "peer",
      peer: { sourceNetworkGbps: p5.networkGbps, sourceRdmaGbps, gpus },
    });
    const rdma = phaseSeconds(onP5(400, 1), "peer_transfer") - PHYSICS.peerSetupSeconds;
    const tcp = phaseSeconds(onP5(0, 1), "peer_transfer") - PHYSICS.peerSetupSeconds;
    // 400 Gbps × 52% (ModelExpress's measured single reader) against 8 flows of 5 Gbps.
    expect(16e9 / rdma).toBeCloseTo((400e9 / 8) * PHYSICS.rdmaGoodputFraction, -8);
    expect(tcp).toBeGreaterThan(4 * rdma);
    // Tensor parallel over 8 GPUs: 8 rails, each with its shard.
    const tp8 = phaseSeconds(onP5(400, 8), "peer_transfer") - PHYSICS.peerSetupSeconds;
    expect(rdma / tp8).toBeCloseTo(8, 1);
  });

  it("gains most from the kernel caches when compilation dominates, as ModelExpress found", () => {
    // ModelExpress (DeepSeek-V4-Pro, 8×B200): weights alone cut time-to-ready 1.1×, weights
    // and kernel caches 4.6×. An engine whose compile and capture dwarf its load behaves so.
    const compileBound: Scenario = {
      ...eightB,
      host: { ...l40s, diskReadMiBps: 1000, diskWriteMiBps: 1000, diskReadStreamMiBps: 1000 },
      engine: { ...eightB.engine, compileSeconds: 300, graphCaptureSeconds: 60 },
    };
    const cold = total(compileBound);
    const weightsOnly = total({
      ...compileBound,
      path: "peer",
      peer: { sourceNetworkGbps: 20, kernelCaches: false },
    });
    const withCaches = total({ ...compileBound, path: "peer", peer: { sourceNetworkGbps: 20 } });
    expect(cold / weightsOnly).toBeLessThan(1.2);
    expect(cold / withCaches).toBeGreaterThan(2.5);
  });

  it("fetches no weights layer of an eStargz image when mounting it is faster: the engine never reads it", () => {
    const withWeightsLayer: Scenario = {
      ...eightB,
      path: "peer",
      image: {
        format: "estargz",
        layers: [
          { bytes: 16_000_000_000, compression: "gzip-0", content: "weights" },
          { bytes: 9_000_000_000, compression: "gzip-6", content: "code" },
        ],
        readFraction: (16e9 + 0.9e9) / 25e9,
      },
      peer: { sourceNetworkGbps: 20 },
    };
    const prefetched = simulateColdStart(withWeightsLayer).phases.find(
      (timing) => timing.phase === "prefetch",
    )!.bytes;
    expect(prefetched).toBeLessThan(1e9);
    // That is the model's choice of image for this start, which dispatch passes on.
    expect(peerMountsEstargz(withWeightsLayer)).toBe(true);
    expect(
      peerMountsEstargz({
        ...withWeightsLayer,
        image: { ...withWeightsLayer.image, format: "oci" },
      }),
    ).toBe(false);
    // A plain image is pulled whole: containerd unpacks every layer, the weights' too.
    const plain = simulateColdStart({
      ...withWeightsLayer,
      image: { ...withWeightsLayer.image, format: "oci" },
    }).phases.find((timing) => timing.phase === "pull")!.bytes;
    expect(plain).toBe(25e9);
  });
});

describe("kernel-cache store and restore's weights from a peer", () => {
  const phaseOf = (scenario: Scenario, phase: string) =>
    simulateColdStart(scenario).phases.find((timing) => timing.phase === phase);

  it("fetches the stored cache before compile, which then runs warm", () => {
    const stored: Scenario = { ...eightB, kernelCache: { bytes: 400e6 } };
    const phases = simulateColdStart(stored).phases.map((timing) => timing.phase);
    expect(phases.indexOf("fetch_kernel_cache")).toBe(phases.indexOf("compile") - 1);
    const fetch = phaseOf(stored, "fetch_kernel_cache")!;
    // One stream from the store: 400 MB at 50 MB/s, after the registry's round trips.
    expect(fetch.bytes).toBe(400e6);
    expect(fetch.seconds).toBeCloseTo(
      (PHYSICS.registrySetupRoundTrips * l40s.registryRttMs) / 1000 + 400e6 / 50e6,
      1,
    );
    const residual = PHYSICS.warmCacheResidualFraction;
    expect(phaseOf(stored, "compile")!.seconds).toBeCloseTo(40 * residual.compile, 5);
    expect(phaseOf(stored, "graph_capture")!.seconds).toBeCloseTo(15 * residual.graphCapture, 5);
    // Worth it: the 58 s of cold compile, capture and warmup cost more than the fetch.
    expect(total(stored)).toBeLessThan(total(eightB) - 30);
  });

  it("is fetched only by starts that compile, and not by a host that kept its own", () => {
    const stored = { kernelCache: { bytes: 400e6 } };
    const fetches = (scenario: Scenario) =>
      simulateColdStart(scenario).phases.filter((t) => t.phase === "fetch_kernel_cache").length;
    expect(fetches({ ...eightB, ...stored, engine: { ...eightB.engine, warmCaches: true } })).toBe(
      0,
    );
    expect(fetches({ ...eightB, ...stored, path: "restore" })).toBe(0);
    // A peer copy with the source's caches fetches those (one phase), not the store's too.
    expect(fetches({ ...eightB, ...stored, path: "peer", peer: { sourceNetworkGbps: 20 } })).toBe(
      1,
    );
    const weightsOnly: Scenario = {
      ...eightB,
      ...stored,
      path: "peer",
      peer: { sourceNetworkGbps: 20, kernelCaches: false },
    };
    expect(phaseOf(weightsOnly, "fetch_kernel_cache")!.bytes).toBe(400e6);
  });

  it("restores a level-2 image with its weights sent by a peer, faster than the gp3 disk", () => {
    const restore: Scenario = {
      ...eightB,
      path: "restore",
      restore: { sleepLevel: 2, snapshotBytes: 3_400_000_000 },
    };
    const fromPeer: Scenario = {
      ...restore,
      restore: { ...restore.restore, weightsFrom: "peer" },
      peer: { sourceNetworkGbps: 20 },
    };
    const phases = simulateColdStart(fromPeer).phases.map((timing) => timing.phase);
    expect(phases).toEqual(["restore", "peer_transfer", "warmup", "ready"]);
    // 16 GB over 20 Gbps × 90%, against one reader at gp3's 125 MiB/s (two minutes).
    expect(phaseOf(fromPeer, "peer_transfer")!.seconds).toBeCloseTo(
      PHYSICS.peerSetupSeconds + 16e9 / 2.25e9,
      1,
    );
    // CRIU still reads the 3.4 GB image from the same disk: the whole restore gains ~4×.
    expect(total(restore) / total(fromPeer)).toBeGreaterThan(3);
    // The scheduler's choice says so; on a host whose disk outruns the link it says no.
    const choice = {
      engine: { ...eightB.engine },
      snapshotBytes: 3_400_000_000,
      sleepLevel: 2 as const,
      stageWeights: false,
      peer: ScenarioPeer.parse({ sourceNetworkGbps: 20 }),
    };
    expect(restoreWeightsFromPeerPays({ ...choice, host: l40s })).toBe(true);
    const nvme = { ...l40s, diskReadMiBps: 12_000, diskReadStreamMiBps: 4_000 };
    expect(restoreWeightsFromPeerPays({ ...choice, host: nvme, stageWeights: true })).toBe(false);
    // A level-1 image kept its weights: nothing to send.
    expect(restoreWeightsFromPeerPays({ ...choice, host: l40s, sleepLevel: 1 })).toBe(false);
  });
});
