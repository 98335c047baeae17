import {
  engineTailSeconds,
  loaderShape,
  readBytesPerSecond,
  weightsSourceOf,
  withGpuCopySeconds,
  engineHostBytes,
  writtenBytesSource,
  type HostRates,
} from "./engine-phases";
import type { ImagePlan } from "./image-reads";
import {
  arrivedBytesAt,
  simulateParallelTransfer,
  type TransferJob,
  type TransferOutcome,
} from "./parallel-transfer";
import type { Physics } from "./physical-constants";
import type { ColdStartScenario, PhaseTiming, ScenarioLazy } from "./scenario-schema";

// eStargz through stargz-snapshotter: mount from metadata, prefetch the recorded landmark
// files (the bytes the engine will read) in range requests spread over all layers, then
// run; any byte not yet local is fetched on demand inside read(), ~50 KB per round trip.
//
// Three nested deadlines gate prefetch. A request running past the per-request fetch
// timeout is cancelled. Create waits for prefetch at most `prefetchTimeoutSeconds` (and
// never past the create deadline); after that the container runs while prefetch goes on in
// the background, until the create-phase deadline cancels whatever is still in flight.
// Bytes that never arrived fall back to lazy reads.

export function lazyPhases(
  scenario: ColdStartScenario,
  plan: ImagePlan,
  rates: HostRates,
  physics: Physics,
): PhaseTiming[] {
  const { lazy, engine } = scenario;
  const mountSeconds = physics.stargzMountRoundTrips * rates.rttSeconds;
  const prefetch = lazy.prefetch ? runPrefetch(plan, lazy, rates) : undefined;
  const waitBudget = Math.min(lazy.prefetchTimeoutSeconds, lazy.createDeadlineSeconds);
  const waitSeconds = prefetch ? Math.min(prefetch.endSeconds, waitBudget) : 0;
  const codeLayers = plan.otherLayerIndexes;
  const arrived = (groups: number[], at: number) =>
    prefetch ? arrivedBytesAt(prefetch, groups, at) : 0;

  // Once prefetch has brought every landmark byte, stargz fetches the rest of each layer in
  // the background (compressed, into its HTTP cache). It pauses while on-demand reads run,
  // so it only matters when the engine reads locally: then its writes share the device.
  const backgroundBytes = prefetch?.complete
    ? plan.layers.reduce(
        (sum, layer) =>
          sum +
          (layer.bytes - layer.readBytes) * (layer.compressedBytes / Math.max(1, layer.bytes)),
        0,
      )
    : 0;
  // Prefetched chunks are written twice (decompressed into the fs cache, compressed into the
  // HTTP cache), the background fetch after them: read back through FUSE from the page cache
  // if all of it fits, else from the device.
  const prefetchedBytes = plan.layers.reduce(
    (sum, layer) => sum + layer.readBytes * (1 + layer.compressedBytes / Math.max(1, layer.bytes)),
    0,
  );
  const prefetchedSource = writtenBytesSource(
    prefetchedBytes + backgroundBytes,
    engineHostBytes(engine, rates, physics),
    rates,
  );
  const localReadBytesPerSecond = (readers: number) =>
    Math.min(
      readBytesPerSecond(rates, readers, prefetchedSource),
      physics.fuseLocalReadBytesPerSecond,
    );

  // Times below are measured from the end of the mount, when prefetch starts.
  const startsAt = waitSeconds + physics.containerCreateSeconds;
  const localCode = Math.min(plan.codeReadBytes, arrived(codeLayers, startsAt));
  const reader = onDemandReader(lazy, rates, physics);
  const localImportRate = localReadBytesPerSecond(1);
  const startSeconds =
    engine.initSeconds +
    localCode / localImportRate +
    lazyImportSeconds(plan.codeReadBytes - localCode, lazy, reader, physics);

  const shape = loaderShape(engine);
  const loadsAt = startsAt + startSeconds;
  const weightsBytes = plan.weightsInImage ? plan.weightsReadBytes : engine.weightsBytes;
  const localWeightsRate = localReadBytesPerSecond(shape.readers);
  const readSeconds = plan.weightsInImage
    ? readAlongPrefetchFront({
        bytes: weightsBytes,
        startsAt: loadsAt,
        front: (at) => arrived(plan.weightsLayerIndexes, at),
        frontStopsAt: prefetch?.endSeconds ?? 0,
        localBytesPerSecond: localWeightsRate,
        lazyBytesPerSecond: Math.min(
          shape.readers * reader.bytesPerSecond,
          rates.nicBytesPerSecond,
        ),
      })
    : weightsBytes / readBytesPerSecond(rates, shape.readers, weightsSourceOf(engine));
  const deviceSharedSeconds = backgroundBytes / rates.diskWriteBytesPerSecond;
  const loadSeconds =
    weightsBytes > 0
      ? physics.loaderSetupSeconds +
        withGpuCopySeconds(weightsBytes, readSeconds + deviceSharedSeconds, shape, rates, physics)
      : 0;

  const tail = engineTailSeconds(engine, physics);
  return [
    {
      phase: "prefetch",
      seconds: mountSeconds + waitSeconds,
      bytes: Math.round(arrived(allGroups(plan), waitSeconds)),
    },
    { phase: "create", seconds: physics.containerCreateSeconds, bytes: 0 },
    { phase: "start", seconds: startSeconds, bytes: Math.round(plan.codeReadBytes) },
    { phase: "load_weights", seconds: loadSeconds, bytes: Math.round(weightsBytes) },
    { phase: "compile", seconds: tail.compile, bytes: 0 },
    { phase: "graph_capture", seconds: tail.graphCapture, bytes: 0 },
    { phase: "warmup", seconds: tail.warmup, bytes: 0 },
  ];
}

function allGroups(plan: ImagePlan): number[] {
  return plan.layers.map((layer) => layer.index);
}

/**
 * Landmark ranges of every layer in one queue, interleaved across layers, taken by idle
 * workers (work stealing). In flight: bounded by the cache fds each chunk holds open.
 * Shared ceiling: NIC, decompression over every core (eStargz compresses files in
 * independent <=4 MiB members), and one disk write of the decompressed bytes (the fs
 * cache). stargz also keeps the compressed bytes in its HTTP cache; the model lets that
 * copy wait in memory and does not charge it to the disk (see the calibration notes).
 */
function runPrefetch(plan: ImagePlan, lazy: ScenarioLazy, rates: HostRates): TransferOutcome {
  const perLayer: TransferJob[][] = plan.layers.map((layer) =>
    splitRange(layer.index, layer.readBytes, lazy.prefetchChunkBytes),
  );
  const queue: TransferJob[] = [];
  for (let round = 0; perLayer.some((jobs) => round < jobs.length); round++) {
    for (const jobs of perLayer) {
      const job = jobs[round];
      if (job) queue.push(job);
    }
  }
  const wireBytes = plan.layers.reduce(
    (sum, layer) => sum + layer.readBytes * (layer.compressedBytes / Math.max(1, layer.bytes)),
    0,
  );
  const diskBytes = plan.layers.reduce((sum, layer) => sum + layer.readBytes, 0);
  const coreSeconds = plan.layers.reduce(
    (sum, layer) => sum + layer.readBytes / layer.decompressBytesPerSecondPerCore,
    0,
  );
  // Ceilings expressed per arriving (uncompressed) byte so they compare with the jobs' sizes.
  const perByte = (resourceBytes: number) => (resourceBytes > 0 ? diskBytes / resourceBytes : 1);
  const aggregateBps = Math.min(
    rates.nicBytesPerSecond * perByte(wireBytes),
    coreSeconds > 0 ? (rates.vcpus * diskBytes) / coreSeconds : Number.POSITIVE_INFINITY,
    rates.diskWriteBytesPerSecond,
  );
  return simulateParallelTransfer(queue, {
    concurrency: lazy.maxCacheFds,
    perStreamBps: rates.registryStreamBytesPerSecond * perByte(wireBytes),
    aggregateBps,
    requestLatencySeconds: rates.rttSeconds,
    requestTimeoutSeconds: lazy.fetchTimeoutSeconds,
    cutoffSeconds: lazy.createDeadlineSeconds,
  });
}

/** Beyond this many ranges per layer, ranges are handed to workers in batches. */
const MAX_JOBS_PER_LAYER = 500;

/** stargz `prefetch_chunk_size = 0` (or a chunk bigger than the range): one GET for the whole range. */
function splitRange(group: number, bytes: number, chunkBytes: number): TransferJob[] {
  if (bytes <= 0) return [];
  if (chunkBytes <= 0 || chunkBytes >= bytes) return [{ group, bytes }];
  const ranges = Math.ceil(bytes / chunkBytes);
  const jobCount = Math.min(ranges, MAX_JOBS_PER_LAYER);
  return Array.from({ length: jobCount }, (_, index) => {
    const requests =
      Math.floor(((index + 1) * ranges) / jobCount) - Math.floor((index * ranges) / jobCount);
    return { group, bytes: (bytes * requests) / ranges, requests };
  });
}

interface OnDemandReader {
  /** One outstanding synchronous range fetch inside read(). */
  bytesPerSecond: number;
  requestSeconds: (bytes: number) => number;
}

/** FUSE turns a read into a range GET of one lazy chunk: a round trip plus the transfer. */
function onDemandReader(lazy: ScenarioLazy, rates: HostRates, physics: Physics): OnDemandReader {
  const requestSeconds = (bytes: number) =>
    rates.rttSeconds + bytes / rates.registryStreamBytesPerSecond + physics.fuseRequestSeconds;
  return {
    bytesPerSecond: lazy.lazyChunkBytes / requestSeconds(lazy.lazyChunkBytes),
    requestSeconds,
  };
}

/**
 * Python's import storm over FUSE: every imported file costs its metadata requests and at
 * least one synchronous range fetch, however small it is.
 */
function lazyImportSeconds(
  bytes: number,
  lazy: ScenarioLazy,
  reader: OnDemandReader,
  physics: Physics,
): number {
  if (bytes <= 0) return 0;
  const files = bytes / physics.importedFileMeanBytes;
  const fetchesPerFile = Math.ceil(physics.importedFileMeanBytes / lazy.lazyChunkBytes);
  const bytesPerFetch = physics.importedFileMeanBytes / fetchesPerFile;
  return (
    files *
    (fetchesPerFile * reader.requestSeconds(bytesPerFetch) +
      physics.fuseMetadataRequestsPerImportedFile * physics.fuseRequestSeconds)
  );
}

/**
 * The loader reads the weights in the order prefetch fetches them (the landmark list is the
 * recorded access order). Behind the prefetch front it reads local bytes; at the front it
 * fetches on demand, one synchronous chunk at a time per reader.
 */
function readAlongPrefetchFront(input: {
  bytes: number;
  startsAt: number;
  front: (at: number) => number;
  frontStopsAt: number;
  localBytesPerSecond: number;
  lazyBytesPerSecond: number;
}): number {
  const { bytes, startsAt, front, frontStopsAt, localBytesPerSecond, lazyBytesPerSecond } = input;
  const STEP_SECONDS = 0.1;
  let now = startsAt;
  let position = 0;
  while (position < bytes) {
    if (now >= frontStopsAt) {
      const local = Math.max(0, Math.min(bytes, front(now)) - position);
      return (
        now -
        startsAt +
        local / localBytesPerSecond +
        (bytes - position - local) / lazyBytesPerSecond
      );
    }
    const step = Math.min(STEP_SECONDS, frontStopsAt - now);
    if (step <= 1e-9) {
      now = frontStopsAt;
      continue;
    }
    const reachable = Math.max(
      position + lazyBytesPerSecond * step,
      Math.min(position + localBytesPerSecond * step, front(now + step)),
    );
    if (reachable >= bytes) {
      const rate = (reachable - position) / step;
      return now - startsAt + (bytes - position) / rate;
    }
    position = reachable;
    now += step;
  }
  return now - startsAt;
}
