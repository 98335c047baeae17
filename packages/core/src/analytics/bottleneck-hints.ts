import type { HostFigures } from "@thaw/protocol";
import { z } from "zod";
import { PHYSICS } from "../cold-start-model/physical-constants.ts";
import { LayerCompression, LayerContent } from "../cold-start-model/scenario-schema.ts";
import {
  DISK_FIGURE_SOURCE_TEXT,
  type DiskFigureSource,
  effectiveDiskFigures,
  NODE_DISK_COLUMNS_SELECT,
  type NodeDiskColumns,
} from "../scheduling/effective-disk-figures.ts";
import { Phase, type StartPath } from "../vocabulary/index.ts";
import type { PhaseSample } from "./cold-start-sample.ts";

// Where a phase's seconds went, from what it moved and the host's figures: each resource's
// busy time at its ceiling (the same physics as the predictor's prior, cold-start-model/)
// against the time the phase took. A resource that alone needs at least a quarter of the
// phase is worth naming — a fix to anything else saves at most the other three quarters;
// when all resources together explain less than half of it, the host's bandwidth is not
// what bounds the phase: per-request latency and timeouts are.

/** Share of a phase a resource must fill, busy at its ceiling, to be named as a bound. */
export const NAMED_BOUND_SHARE = 0.25;
/** Below this share explained by every resource together, the phase is latency bound. */
export const EXPLAINED_SHARE = 0.5;

const MIB = 1024 * 1024;
/** Phase timestamps are milliseconds: a shorter phase carries no rate worth reading. */
const SHORTEST_PHASE_SECONDS = 0.001;

export const BoundKind = z.enum([
  "network",
  "registry_stream",
  "decompression",
  "disk_write",
  "disk_read",
  "sequential_loader",
  "pcie",
  "latency",
  "compile",
]);
export type BoundKind = z.infer<typeof BoundKind>;

export const BottleneckHint = z.object({
  phase: Phase,
  bound: BoundKind,
  /** The phase's measured seconds. */
  phaseSeconds: z.number(),
  /** Seconds of the phase this bound accounts for (what fixing it could save, at most). */
  attributedSeconds: z.number(),
  /** bytes_per_second: achieved over the phase vs the host's ceiling; seconds: measured vs what warm caches leave. */
  unit: z.enum(["bytes_per_second", "seconds"]),
  measured: z.number(),
  ceiling: z.number(),
  text: z.string(),
});
export type BottleneckHint = z.infer<typeof BottleneckHint>;

/**
 * The host's figures that bound a phase: the agent protocol's HostFigures as stored on its
 * Node row, with the disk figures effectiveDiskFigures chose and where they came from.
 */
export type HostCeilings = Pick<
  HostFigures,
  "vcpus" | "networkGbps" | "diskWriteMiBps" | "diskReadMiBps" | "pcieGBps"
> & {
  /** Where the disk figures came from; absent: not known (the hints then do not say). */
  diskSource?: DiskFigureSource;
};

/** The Node columns hostCeilings reads: select them together. */
export const HOST_CEILINGS_SELECT = {
  vcpus: true,
  networkGbps: true,
  pcieGBps: true,
  ...NODE_DISK_COLUMNS_SELECT,
} as const;

/** A Node row's ceilings, its disk as the predictor sees it (measured, provisioned, profile). */
export function hostCeilings(
  node: Pick<HostFigures, "vcpus" | "networkGbps" | "pcieGBps"> & NodeDiskColumns,
): Required<HostCeilings> {
  const disk = effectiveDiskFigures(node);
  return {
    vcpus: node.vcpus,
    networkGbps: node.networkGbps,
    pcieGBps: node.pcieGBps,
    diskReadMiBps: disk.readMiBps,
    diskWriteMiBps: disk.writeMiBps,
    diskSource: disk.source,
  };
}

export interface BottleneckInput {
  path: StartPath;
  phases: readonly PhaseSample[];
  /** Null when the start never reached a node. */
  host: HostCeilings | null;
  /** Deployment.imageLayers: [{ bytes, compression, content }]; anything else reads as unknown. */
  imageLayers: unknown;
  /** Deployment.engineProfile: { loader, loaderConcurrency, ... }. */
  engineProfile: unknown;
}

const ImageLayers = z.array(
  z.object({
    bytes: z.number().nonnegative(),
    compression: LayerCompression,
    content: LayerContent,
  }),
);
const EngineProfile = z.object({
  loader: z.enum(["sequential", "concurrent"]).catch("sequential"),
  loaderConcurrency: z.number().int().positive().catch(1),
});

interface Demand {
  bound: Exclude<BoundKind, "latency" | "compile">;
  /** Seconds this resource needs at its ceiling. */
  seconds: number;
  /** Bytes it handles. */
  bytes: number;
  ceilingBps: number;
  text: string;
}

const mibps = (bps: number) => `${Math.round(bps / MIB).toLocaleString("en-US")} MiB/s`;
const mbps = (bps: number) => `${Math.round(bps / 1e6).toLocaleString("en-US")} MB/s`;
const gbps = (bps: number) => `${((bps * 8) / 1e9).toFixed(1)} Gbps`;
/** " (measured on the host)": where a disk figure came from, when known. */
const fromWhere = (source: DiskFigureSource | undefined) =>
  source ? ` (${DISK_FIGURE_SOURCE_TEXT[source]})` : "";
const secs = (s: number) => (s < 10 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`);

/** Bottleneck hints of one cold start, largest saving first. */
export function bottleneckHints(input: BottleneckInput): BottleneckHint[] {
  const layers = ImageLayers.safeParse(input.imageLayers);
  const engine = EngineProfile.safeParse(input.engineProfile ?? {});
  const startSeconds = input.phases.reduce((sum, p) => sum + (p.seconds ?? 0), 0);
  const hints: BottleneckHint[] = [];
  for (const phase of input.phases) {
    const seconds = phase.seconds ?? 0;
    if (seconds < SHORTEST_PHASE_SECONDS) continue;
    if (phase.phase === "compile") {
      const hint = compileHint(phase, input.path, input.phases, startSeconds);
      if (hint) hints.push(hint);
      continue;
    }
    if (phase.phase === "fetch_kernel_cache" && input.path !== "peer") {
      const hint = input.host && storeFetchHint(phase, input.host, startSeconds);
      if (hint) hints.push(hint);
      continue;
    }
    if (phase.phase === "peer_transfer" || phase.phase === "fetch_kernel_cache") {
      const hint = input.host && peerCopyHint(phase, input.host, startSeconds);
      if (hint) hints.push(hint);
      continue;
    }
    const bytes = phase.bytes ?? 0;
    if (!input.host || bytes <= 0 || phase.attributes.cached === true) continue;
    const demands = demandsOf(
      phase.phase,
      bytes,
      input.host,
      layers.success ? layers.data : [],
      engine.success ? engine.data : { loader: "sequential", loaderConcurrency: 1 },
    );
    if (!demands) continue;
    hints.push(...boundsOf(phase.phase, seconds, demands));
  }
  return hints.sort((a, b) => b.attributedSeconds - a.attributedSeconds);
}

function boundsOf(phase: Phase, seconds: number, demands: Demand[]): BottleneckHint[] {
  const explained = demands.reduce((sum, d) => sum + d.seconds, 0);
  if (explained < EXPLAINED_SHARE * seconds) {
    const bytes = Math.max(...demands.map((d) => d.bytes));
    return [
      {
        phase,
        bound: "latency",
        phaseSeconds: seconds,
        attributedSeconds: seconds - explained,
        unit: "bytes_per_second",
        measured: bytes / seconds,
        ceiling: explained > 0 ? bytes / explained : bytes / seconds,
        text: latencyText(phase, seconds, explained, bytes),
      },
    ];
  }
  return demands
    .filter((d) => d.seconds >= NAMED_BOUND_SHARE * seconds)
    .map((d) => ({
      phase,
      bound: d.bound,
      phaseSeconds: seconds,
      attributedSeconds: Math.min(d.seconds, seconds),
      unit: "bytes_per_second" as const,
      measured: d.bytes / seconds,
      ceiling: d.ceilingBps,
      text: d.text,
    }));
}

function latencyText(phase: Phase, seconds: number, explained: number, bytes: number): string {
  const achieved = `${phase} moved ${mbps(bytes / seconds)} in ${secs(seconds)}; the host's bandwidth allows ${secs(explained)}`;
  if (phase === "prefetch")
    return `${achieved} — prefetch is request-latency bound: raise the prefetch chunk size (32 MB), max_cache_fds and the prefetch / per-request fetch timeouts`;
  if (phase === "load_weights")
    return `${achieved} — the loader waits on per-tensor reads and copies: use a concurrent, pinned loader (Run:ai Model Streamer)`;
  return `${achieved} — latency bound (registry round trips, throttling, retries), not bandwidth: check the registry / store and per-request timeouts`;
}

type Layer = z.infer<typeof ImageLayers>[number];
type Engine = z.infer<typeof EngineProfile>;

function demandsOf(
  phase: Phase,
  bytes: number,
  host: HostCeilings,
  layers: Layer[],
  engine: Engine,
): Demand[] | null {
  const nicBps = ((host.networkGbps * 1e9) / 8) * PHYSICS.nicGoodputFraction;
  const writeBps = host.diskWriteMiBps * MIB;
  const readBps = host.diskReadMiBps * MIB;
  const pcieBps = host.pcieGBps * 1e9;
  const disk = host.diskSource;
  switch (phase) {
    case "pull":
      return pullDemands(bytes, layers, nicBps, writeBps, readBps, disk);
    case "prefetch":
      return prefetchDemands(bytes, layers, host.vcpus, nicBps, writeBps, disk);
    case "fetch_snapshot":
      return [
        networkDemand("fetch_snapshot", bytes, nicBps),
        diskWriteDemand("fetch_snapshot", bytes, writeBps, disk),
      ];
    case "load_weights":
      return loadWeightsDemands(bytes, engine, readBps, pcieBps, disk);
    default:
      return null;
  }
}

function networkDemand(phase: Phase, bytes: number, nicBps: number): Demand {
  return {
    bound: "network",
    seconds: bytes / nicBps,
    bytes,
    ceilingBps: nicBps,
    text: `${phase} is network bound at ${gbps(nicBps)} of goodput — a host with more network bandwidth, or fewer bytes: the lazy path fetches only what the engine reads`,
  };
}

/** gp3's throughput ceiling: past it, only instance-store NVMe (or io2) is faster. */
const GP3_MAX_MIBPS = 1000;

function diskWriteDemand(
  phase: Phase,
  deviceBytes: number,
  writeBps: number,
  source: DiskFigureSource | undefined,
): Demand {
  const fix =
    writeBps < GP3_MAX_MIBPS * MIB
      ? "provision gp3 throughput (up to 1,000 MiB/s: the fleet provider's dataVolume.throughputMiBps) or put containerd's root on instance-store NVMe (RAID 0)"
      : "gp3 is at its ceiling: put containerd's root on instance-store NVMe (RAID 0)";
  return {
    bound: "disk_write",
    seconds: deviceBytes / writeBps,
    bytes: deviceBytes,
    ceilingBps: writeBps,
    text: `${phase} is disk-write bound at ${mibps(writeBps)}${fromWhere(source)} — ${fix}`,
  };
}

/**
 * Plain pull (cold-start-model/pull-path.ts): each layer is fetched whole through one HTTP
 * stream (a few at once, sharing the NIC), then unpacked in chain order — one core inflates
 * a gzip stream while the device takes the blob read back and the unpacked writes.
 */
function pullDemands(
  bytes: number,
  layers: Layer[],
  nicBps: number,
  writeBps: number,
  readBps: number,
  diskSource: DiskFigureSource | undefined,
): Demand[] {
  const imageBytes = layers.reduce((sum, l) => sum + l.bytes, 0);
  // The phase may have pulled part of the image (layers already held): scale to its bytes.
  const scale = imageBytes > 0 ? Math.min(1, bytes / imageBytes) : 1;
  const work =
    layers.length > 0
      ? layers.map((l) => {
          const unpacked = l.bytes * scale;
          return {
            unpacked,
            compressed: unpacked * PHYSICS.compressedFraction[l.compression][l.content],
            inflateBps: PHYSICS.decompressBytesPerSecondPerCore[l.compression][l.content],
            compression: l.compression,
          };
        })
      : [
          {
            unpacked: bytes,
            compressed: bytes,
            inflateBps: Infinity,
            compression: "none" as const,
          },
        ];
  const compressed = work.reduce((sum, w) => sum + w.compressed, 0);
  const largest = work.reduce((a, b) => (b.compressed > a.compressed ? b : a));
  const streamBps = Math.min(PHYSICS.registryStreamBytesPerSecond, nicBps);

  const demands: Demand[] = [];
  const nicSeconds = compressed / nicBps;
  const streamSeconds = largest.compressed / streamBps;
  if (streamSeconds > nicSeconds)
    demands.push({
      bound: "registry_stream",
      seconds: streamSeconds,
      bytes: largest.compressed,
      ceilingBps: streamBps,
      text: `pull is bound by one registry stream per layer (~${mbps(streamBps)}) dragging the ${(largest.compressed / 1e9).toFixed(1)} GB layer — the lazy path's prefetch fetches byte ranges of every layer in parallel; or keep the weights out of the image and stream them concurrently`,
    });
  else demands.push(networkDemand("pull", compressed, nicBps));

  // Unpack: per layer the slower of one inflating core and the device.
  let inflateSeconds = 0;
  let inflateBytes = 0;
  let deviceSeconds = 0;
  let deviceBytes = 0;
  let gzip = false;
  for (const w of work) {
    const inflate = w.unpacked / w.inflateBps;
    const device = w.compressed / readBps + w.unpacked / writeBps;
    if (inflate >= device) {
      inflateSeconds += inflate;
      inflateBytes += w.unpacked;
      gzip ||= w.compression.startsWith("gzip") && w.compression !== "gzip-0";
    } else {
      deviceSeconds += device;
      deviceBytes += w.compressed + w.unpacked;
    }
  }
  if (inflateSeconds > 0)
    demands.push({
      bound: "decompression",
      seconds: inflateSeconds,
      bytes: inflateBytes,
      ceilingBps: inflateBytes / inflateSeconds,
      text: `pull is decompression bound — a ${gzip ? "gzip" : "compressed"} stream inflates on one core (~${mbps(inflateBytes / inflateSeconds)}) however many cores the host has: build the weights layers at gzip level 0 (quantized weights barely compress), or use the lazy path (eStargz spreads decompression over cores)`,
    });
  if (deviceSeconds > 0) {
    // The device also reads the blob back as it unpacks: the write ceiling is what binds.
    demands.push({
      ...diskWriteDemand("pull", deviceBytes, writeBps, diskSource),
      seconds: deviceSeconds,
    });
  }
  return demands;
}

/** eStargz prefetch: byte ranges of all layers in parallel, inflated on every core (≤4 MiB segments). */
function prefetchDemands(
  bytes: number,
  layers: Layer[],
  vcpus: number,
  nicBps: number,
  writeBps: number,
  diskSource: DiskFigureSource | undefined,
): Demand[] {
  const imageBytes = layers.reduce((sum, l) => sum + l.bytes, 0);
  let inflateSeconds = 0;
  let compressed = bytes;
  if (imageBytes > 0) {
    inflateSeconds = 0;
    compressed = 0;
    for (const l of layers) {
      const share = (l.bytes / imageBytes) * bytes;
      inflateSeconds +=
        share / (PHYSICS.decompressBytesPerSecondPerCore[l.compression][l.content] * vcpus);
      compressed += share * PHYSICS.compressedFraction[l.compression][l.content];
    }
  }
  const demands = [
    networkDemand("prefetch", compressed, nicBps),
    diskWriteDemand("prefetch", bytes, writeBps, diskSource),
  ];
  if (inflateSeconds > 0)
    demands.push({
      bound: "decompression",
      seconds: inflateSeconds,
      bytes,
      ceilingBps: bytes / inflateSeconds,
      text: `prefetch is decompression bound on all ${vcpus} cores (~${mbps(bytes / inflateSeconds)}) — build the eStargz variant at compression level 0 (ctr-remote image optimize --estargz-compression-level 0)`,
    });
  return demands;
}

/**
 * Weights from a local device to the GPU (cold-start-model/engine-phases.ts): a sequential
 * loader reads with one stream and copies from pageable memory after each read; a
 * concurrent one reads with N streams and overlaps pinned copies.
 */
function loadWeightsDemands(
  bytes: number,
  engine: Engine,
  readBps: number,
  pcieBps: number,
  diskSource: DiskFigureSource | undefined,
): Demand[] {
  const disk = `${mibps(readBps)} disk${fromWhere(diskSource)}`;
  const streamBps = PHYSICS.defaultDiskReadStreamMiBps * MIB;
  const concurrent = engine.loader === "concurrent";
  const readers = concurrent ? engine.loaderConcurrency : 1;
  const loaderReadBps = Math.min(readBps, readers * streamBps);
  const demands: Demand[] = [];
  if (loaderReadBps < readBps)
    demands.push({
      bound: "sequential_loader",
      seconds: bytes / loaderReadBps,
      bytes,
      ceilingBps: loaderReadBps,
      text: concurrent
        ? `load_weights is loader bound — ${readers} readers reach ${mibps(loaderReadBps)} of a ${disk}: raise the loader's concurrency`
        : `load_weights is loader bound — one sequential reader reaches ~${mibps(loaderReadBps)} of a ${disk}: use a concurrent loader (Run:ai Model Streamer, 8–16 readers)`,
    });
  else
    demands.push({
      bound: "disk_read",
      seconds: bytes / readBps,
      bytes,
      ceilingBps: readBps,
      text: `load_weights is disk-read bound at ${mibps(readBps)}${fromWhere(diskSource)} — more readers add nothing past the device: ${readBps < GP3_MAX_MIBPS * MIB ? "provision gp3 throughput (up to 1,000 MiB/s: the fleet provider's dataVolume.throughputMiBps), io2 or local NVMe" : "gp3 is at its ceiling: io2 or local NVMe"}; a restore or warm start skips the read`,
    });
  if (pcieBps > 0) {
    const copyBps = concurrent ? pcieBps : pcieBps * PHYSICS.pageableCopyFraction;
    demands.push({
      bound: "pcie",
      seconds: bytes / copyBps,
      bytes,
      ceilingBps: copyBps,
      text: concurrent
        ? `load_weights is PCIe bound at ${(copyBps / 1e9).toFixed(0)} GB/s — the host link's ceiling; only a warm replica skips the copy`
        : `load_weights copies from pageable memory at ~${(copyBps / 1e9).toFixed(0)} GB/s, half the PCIe rate, after each read — use a concurrent loader with pinned, double-buffered chunks`,
    });
  }
  return demands;
}

/**
 * What one copy from a serving replica gets over TCP on this host (cold-start-model/
 * peer-path.ts): the NIC's goodput, or the flows' caps when they are lower. The source's side
 * is not known here: a copy well below this figure was bound there.
 */
function peerTcpBytesPerSecond(host: HostCeilings): number {
  const nicBps = ((host.networkGbps * 1e9) / 8) * PHYSICS.nicGoodputFraction;
  return Math.min(nicBps, PHYSICS.peerTcpFlows * PHYSICS.tcpFlowBytesPerSecond);
}

/**
 * The peer path's copies from a serving replica (the weights, then the compiled-kernel
 * caches): named when one takes at least a quarter of the start. Each is a transfer between
 * two hosts, bound by the slower one's network, so the whole copy past its setup is what a
 * faster link could save.
 */
function peerCopyHint(
  phase: PhaseSample,
  host: HostCeilings,
  startSeconds: number,
): BottleneckHint | null {
  const seconds = phase.seconds ?? 0;
  const bytes = phase.bytes ?? 0;
  if (bytes <= 0 || seconds < NAMED_BOUND_SHARE * startSeconds) return null;
  const ceiling = peerTcpBytesPerSecond(host);
  const measured = bytes / seconds;
  const figures = `${(bytes / 1e9).toFixed(1)} GB in ${secs(seconds)} of ${secs(startSeconds)} at ${mbps(measured)} (TCP on this host allows ~${mbps(ceiling)})`;
  const base = {
    phase: phase.phase,
    bound: "network" as const,
    phaseSeconds: seconds,
    unit: "bytes_per_second" as const,
    measured,
    ceiling,
  };
  const flowGbps = Math.round((PHYSICS.tcpFlowBytesPerSecond * 8) / 1e9);
  if (phase.phase === "peer_transfer") {
    const side =
      measured > ceiling
        ? "it outran TCP here, so it went GPU to GPU over RDMA"
        : measured < EXPLAINED_SHARE * ceiling
          ? "well below this host's TCP: the source's, or the other copies it sends meanwhile"
          : "this host's TCP";
    return {
      ...base,
      attributedSeconds: Math.max(0, seconds - PHYSICS.peerSetupSeconds),
      text: `peer_transfer dominates — it copied ${figures}: the copy from the serving replica is bound by the slower host's network (${side}): hosts with EFA (p4d, p5) copy GPU to GPU over RDMA; over TCP a single flow is capped at ${flowGbps} Gbps outside a cluster placement group (AWS), so keep the copy on several flows or put the hosts in one placement group`,
    };
  }
  const cause =
    measured < EXPLAINED_SHARE * ceiling
      ? `the link is slow: the caches go over TCP whatever the fabric, at the slower host's rate and shared with the source's other copies — put the hosts in one cluster placement group (a single flow is capped at ${flowGbps} Gbps outside one)`
      : "the caches are large: the link is near this host's ceiling, so send only what this engine runs — clear the source's Triton, torch.compile, FlashInfer and DeepGEMM cache directories of other models and configurations";
  return {
    ...base,
    attributedSeconds: seconds,
    text: `fetch_kernel_cache is long — it copied ${figures}: ${cause}`,
  };
}

/**
 * A pull or lazy start's fetch of the deployment's stored kernel cache (cold-start-model/
 * kernel-cache.ts): one stream from the operator's store, bound by the registry's per-stream
 * rate or this host's network. Named when it takes a quarter of the start.
 */
function storeFetchHint(
  phase: PhaseSample,
  host: HostCeilings,
  startSeconds: number,
): BottleneckHint | null {
  const seconds = phase.seconds ?? 0;
  const bytes = phase.bytes ?? 0;
  if (bytes <= 0 || seconds < NAMED_BOUND_SHARE * startSeconds) return null;
  const nicBps = ((host.networkGbps * 1e9) / 8) * PHYSICS.nicGoodputFraction;
  const ceiling = Math.min(PHYSICS.registryStreamBytesPerSecond, nicBps);
  const measured = bytes / seconds;
  const cause =
    measured < EXPLAINED_SHARE * ceiling
      ? "well below one stream's rate: the store is slow or far from this host — keep THAW_SNAPSHOT_REGISTRY in this host's region"
      : "the cache is large for one stream: it holds more than this engine runs (every configuration the deployment's engines compiled) — redeploy to start a fresh cache, or keep one engine configuration per deployment";
  return {
    phase: phase.phase,
    bound: "network",
    phaseSeconds: seconds,
    attributedSeconds: seconds,
    unit: "bytes_per_second",
    measured,
    ceiling,
    text: `fetch_kernel_cache is long — it fetched ${(bytes / 1e9).toFixed(1)} GB of compiled kernels from the store in ${secs(seconds)} of ${secs(startSeconds)} at ${mbps(measured)} (one stream from the store allows ~${mbps(ceiling)}): ${cause}`,
  };
}

/**
 * Compilation and CUDA graph capture with cold caches: persisted caches leave only what is
 * not compilation (cold-start-model: warmCacheResidualFraction). A start that fetched kernel
 * caches (from the serving replica on the peer path, from the store on pull and lazy)
 * compiles warm when they match this engine: one that still compiles long recompiled,
 * whatever the engine reported of its caches.
 */
function compileHint(
  compile: PhaseSample,
  path: StartPath,
  phases: readonly PhaseSample[],
  startSeconds: number,
): BottleneckHint | null {
  const fetchedCaches = phases.some((p) => p.phase === "fetch_kernel_cache");
  const peerCaches = path === "peer" && fetchedCaches;
  const storedCaches = path !== "peer" && fetchedCaches;
  if (compile.attributes.warmCaches === true && !fetchedCaches) return null;
  const graph = phases
    .filter((p) => p.phase === "graph_capture")
    .reduce((sum, p) => sum + (p.seconds ?? 0), 0);
  const measured = (compile.seconds ?? 0) + graph;
  if (measured < NAMED_BOUND_SHARE * startSeconds) return null;
  const residual = PHYSICS.warmCacheResidualFraction;
  const warm = (compile.seconds ?? 0) * residual.compile + graph * residual.graphCapture;
  return {
    phase: "compile",
    bound: "compile",
    phaseSeconds: compile.seconds ?? 0,
    attributedSeconds: measured - warm,
    unit: "seconds",
    measured,
    ceiling: warm,
    text: peerCaches
      ? `compile dominates although the serving replica sent its kernel caches — compile and graph capture took ${secs(measured)} of ${secs(startSeconds)}: the caches did not match this engine (vLLM keys its torch.compile cache by its config, so a source started with a different --max-model-len or --max-num-batched-tokens recompiles): start the source and this replica with the same engine arguments; matching caches leave ~${secs(warm)}`
      : storedCaches
        ? `compile dominates although the stored kernel cache was fetched — compile and graph capture took ${secs(measured)} of ${secs(startSeconds)}: the cache did not match this engine (vLLM keys its torch.compile cache by its config, environment and code, so a start with other engine arguments or VLLM_* settings recompiles): keep the deployment's engine arguments and environment the same on every replica; a matching cache leaves ~${secs(warm)}`
        : `compile dominates — compile and graph capture took ${secs(measured)} of ${secs(startSeconds)}: persist compile caches (~/.cache/vllm, ~/.triton, ~/.cache/flashinfer) across starts — Thaw keeps them in its kernel-cache store when THAW_SNAPSHOT_REGISTRY is set: the first start on each GPU model and driver captures them, later ones fetch them; warm caches leave ~${secs(warm)}`,
  };
}
