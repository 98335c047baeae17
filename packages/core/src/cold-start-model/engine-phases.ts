import type { Physics } from "./physical-constants";
import type { ScenarioEngine, ScenarioHost } from "./scenario-schema";

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** The host's figures in bytes and seconds. */
export interface HostRates {
  vcpus: number;
  nicBytesPerSecond: number;
  registryStreamBytesPerSecond: number;
  rttSeconds: number;
  diskWriteBytesPerSecond: number;
  diskReadBytesPerSecond: number;
  diskReadStreamBytesPerSecond: number;
  /** Pinned host -> GPU; 0 without a GPU. */
  pcieBytesPerSecond: number;
  /** One buffered reader of bytes already in the page cache. */
  pageCacheReaderBytesPerSecond: number;
  /** All readers of cached bytes together. */
  pageCacheReadBytesPerSecond: number;
  /** Host RAM. */
  memoryBytes: number;
}

/** Where the bytes a phase reads are when it reads them (the scenario's own vocabulary). */
export type ByteSource = NonNullable<ScenarioEngine["weightsSource"]>;

/** Where weights outside the image are: as the scenario says, else on the device. */
export function weightsSourceOf(engine: Pick<ScenarioEngine, "weightsSource">): ByteSource {
  return engine.weightsSource ?? "disk";
}

export function hostRates(host: ScenarioHost, physics: Physics): HostRates {
  const nicBytesPerSecond = ((host.networkGbps * 1e9) / 8) * physics.nicGoodputFraction;
  return {
    vcpus: host.vcpus,
    nicBytesPerSecond,
    registryStreamBytesPerSecond: Math.min(physics.registryStreamBytesPerSecond, nicBytesPerSecond),
    rttSeconds: host.registryRttMs / 1000,
    diskWriteBytesPerSecond: host.diskWriteMiBps * MIB,
    diskReadBytesPerSecond: host.diskReadMiBps * MIB,
    diskReadStreamBytesPerSecond:
      (host.diskReadStreamMiBps ?? physics.defaultDiskReadStreamMiBps) * MIB,
    pcieBytesPerSecond: host.pcieGBps * 1e9,
    pageCacheReaderBytesPerSecond: physics.pageCacheReaderBytesPerSecond,
    pageCacheReadBytesPerSecond: physics.pageCacheReadBytesPerSecond,
    memoryBytes: (host.memoryGiB ?? physics.defaultHostMemoryGiB) * GIB,
  };
}

/**
 * Where bytes this start wrote (pulled layers, prefetched chunks, a fetched snapshot, and
 * every copy kept beside them) are when they are read back, in the order they were written.
 * The page cache holds them if they fit in the RAM beside `heldBytes`, what the start's
 * process holds meanwhile. If they do not fit, a read in write order finds nothing: each miss
 * evicts the oldest cached bytes, which are the next ones it will read (LRU's sequential
 * flooding), so it reads the device.
 */
export function writtenBytesSource(
  writtenBytes: number,
  heldBytes: number,
  rates: HostRates,
): ByteSource {
  return writtenBytes + heldBytes <= rates.memoryBytes ? "page-cache" : "disk";
}

/** What a starting engine holds in host memory: its process, and without a GPU its weights. */
export function engineHostBytes(
  engine: Pick<ScenarioEngine, "weightsBytes">,
  rates: HostRates,
  physics: Physics,
): number {
  return physics.engineHostProcessBytes + (rates.pcieBytesPerSecond > 0 ? 0 : engine.weightsBytes);
}

/** Buffered readers copying bytes the kernel holds: one core each, memory bandwidth together. */
export function pageCacheReadBytesPerSecond(rates: HostRates, readers: number): number {
  return Math.min(
    rates.pageCacheReadBytesPerSecond,
    Math.max(1, readers) * rates.pageCacheReaderBytesPerSecond,
  );
}

/**
 * Readers in flight bound by their own latency until together they reach the device
 * ceiling; every buffered byte is also copied out of the page cache on its way.
 */
export function diskReadBytesPerSecond(rates: HostRates, readers: number): number {
  return Math.min(
    rates.diskReadBytesPerSecond,
    Math.max(1, readers) * rates.diskReadStreamBytesPerSecond,
    pageCacheReadBytesPerSecond(rates, readers),
  );
}

/** `readers` reading bytes that sit where `source` says. */
export function readBytesPerSecond(rates: HostRates, readers: number, source: ByteSource): number {
  return source === "page-cache"
    ? pageCacheReadBytesPerSecond(rates, readers)
    : diskReadBytesPerSecond(rates, readers);
}

/** How the weights reach the GPU once read: the loader's readers and whether copies overlap reads. */
export interface LoaderShape {
  readers: number;
  /** Pinned, double-buffered chunks: reading the next chunk while the previous one is DMA'd. */
  overlapped: boolean;
}

export function loaderShape(
  engine: Pick<ScenarioEngine, "loader" | "loaderConcurrency">,
): LoaderShape {
  return engine.loader === "concurrent"
    ? { readers: engine.loaderConcurrency, overlapped: true }
    : { readers: 1, overlapped: false };
}

/**
 * Weights already read in `readSeconds` reach the GPU: a sequential loader copies tensor by
 * tensor from pageable memory after each read; a concurrent one overlaps reads and DMA.
 * Without a GPU (pcie 0) loading ends in host memory.
 */
export function withGpuCopySeconds(
  bytes: number,
  readSeconds: number,
  shape: LoaderShape,
  rates: HostRates,
  physics: Physics,
): number {
  if (rates.pcieBytesPerSecond <= 0 || bytes <= 0) return readSeconds;
  if (shape.overlapped) return Math.max(readSeconds, bytes / rates.pcieBytesPerSecond);
  return readSeconds + bytes / (rates.pcieBytesPerSecond * physics.pageableCopyFraction);
}

/** Weights read from local files (on the device, or still in the page cache) and copied to the GPU. */
export function loadLocalWeightsSeconds(
  bytes: number,
  shape: LoaderShape,
  source: ByteSource,
  rates: HostRates,
  physics: Physics,
): number {
  if (bytes <= 0) return 0;
  const readSeconds = bytes / readBytesPerSecond(rates, shape.readers, source);
  return physics.loaderSetupSeconds + withGpuCopySeconds(bytes, readSeconds, shape, rates, physics);
}

/** compile, graph capture and warmup: warm caches leave only the part that is not compilation. */
export function engineTailSeconds(engine: ScenarioEngine, physics: Physics) {
  const residual = engine.warmCaches
    ? physics.warmCacheResidualFraction
    : { compile: 1, graphCapture: 1, warmup: 1 };
  return {
    compile: engine.compileSeconds * residual.compile,
    graphCapture: engine.graphCaptureSeconds * residual.graphCapture,
    warmup: engine.warmupSeconds * residual.warmup,
  };
}
