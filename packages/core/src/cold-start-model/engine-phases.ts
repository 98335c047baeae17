import type { Physics } from "./physical-constants";
import type { ScenarioEngine, ScenarioHost } from "./scenario-schema";

const MIB = 1024 * 1024;

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
  };
}

/** Readers in flight bound by their own latency until together they reach the device ceiling. */
export function diskReadBytesPerSecond(rates: HostRates, readers: number): number {
  return Math.min(
    rates.diskReadBytesPerSecond,
    Math.max(1, readers) * rates.diskReadStreamBytesPerSecond,
  );
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

/** Weights read from a local block device and copied to the GPU. */
export function loadWeightsFromDiskSeconds(
  bytes: number,
  shape: LoaderShape,
  rates: HostRates,
  physics: Physics,
): number {
  if (bytes <= 0) return 0;
  const readSeconds = bytes / diskReadBytesPerSecond(rates, shape.readers);
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
