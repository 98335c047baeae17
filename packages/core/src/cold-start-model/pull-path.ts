import {
  engineTailSeconds,
  loadLocalWeightsSeconds,
  loaderShape,
  pageCacheReadBytesPerSecond,
  readBytesPerSecond,
  weightsSourceOf,
  engineHostBytes,
  writtenBytesSource,
  type HostRates,
} from "./engine-phases";
import type { ImagePlan } from "./image-reads";
import { simulateParallelTransfer, type TransferOutcome } from "./parallel-transfer";
import type { Physics } from "./physical-constants";
import type { ColdStartScenario, PhaseTiming } from "./scenario-schema";

// Plain containerd pull: every layer is fetched whole (one GET each, a few in parallel) into
// the content store, then unpacked in chain order: a gzip stream is serial, so one core
// decompresses each layer while the snapshot is written. The giant weights layer dominates:
// its one stream, then its one core.

export function pullPhases(
  scenario: ColdStartScenario,
  plan: ImagePlan,
  rates: HostRates,
  physics: Physics,
): PhaseTiming[] {
  const imageBytes = plan.layers.reduce((sum, layer) => sum + layer.bytes, 0);
  return [
    { phase: "pull", seconds: pullSeconds(plan, rates, physics), bytes: imageBytes },
    { phase: "create", seconds: physics.containerCreateSeconds, bytes: 0 },
    ...engineFromLocalDisk(scenario, plan, rates, physics),
  ];
}

function pullSeconds(plan: ImagePlan, rates: HostRates, physics: Physics): number {
  const fetch = simulateParallelTransfer(
    plan.layers.map((layer) => ({ group: layer.index, bytes: layer.compressedBytes })),
    {
      concurrency: physics.pullMaxConcurrentDownloads,
      perStreamBps: rates.registryStreamBytesPerSecond,
      aggregateBps: rates.nicBytesPerSecond,
      requestLatencySeconds: rates.rttSeconds,
    },
  );
  // Unpack in chain order: a layer is applied on its parent's snapshot once both are ready.
  // Decompression (one core) overlaps the snapshot writes: bytes wait in memory, the slower
  // of the two bounds the layer. The blob is read back from the content store as it unpacks,
  // seconds after it was written: the page cache still holds it, so only writes reach the device.
  let unpackedAt = 0;
  let deviceSeconds = 0;
  for (const layer of plan.layers) {
    const decompressSeconds = layer.bytes / layer.decompressBytesPerSecondPerCore;
    const unpackDeviceSeconds =
      layer.compressedBytes / pageCacheReadBytesPerSecond(rates, 1) +
      layer.bytes / rates.diskWriteBytesPerSecond;
    unpackedAt =
      Math.max(unpackedAt, fetchedAt(fetch, layer.index)) +
      Math.max(decompressSeconds, unpackDeviceSeconds);
    // The content store write of the compressed blob shares the device with every unpack.
    deviceSeconds += layer.compressedBytes / rates.diskWriteBytesPerSecond + unpackDeviceSeconds;
  }
  return physics.registrySetupRoundTrips * rates.rttSeconds + Math.max(unpackedAt, deviceSeconds);
}

/** When a layer's last byte arrived. */
function fetchedAt(outcome: TransferOutcome, group: number): number {
  const final = outcome.arrivedBytesByGroup[group] ?? 0;
  const point = outcome.timeline.find(
    (entry) => (entry.arrivedBytesByGroup[group] ?? 0) >= final - 1e-6,
  );
  return point?.seconds ?? outcome.endSeconds;
}

/** start .. ready when every byte the engine reads is local (on the device or in the page cache). */
export function engineFromLocalDisk(
  scenario: ColdStartScenario,
  plan: ImagePlan,
  rates: HostRates,
  physics: Physics,
): PhaseTiming[] {
  const { engine } = scenario;
  // The pull wrote every layer twice, the compressed blob into the content store and the
  // unpacked snapshot; what the engine reads of the image is cached if all of that fits.
  const imageSource = writtenBytesSource(
    plan.layers.reduce((sum, layer) => sum + layer.compressedBytes + layer.bytes, 0),
    engineHostBytes(engine, rates, physics),
    rates,
  );
  // Imports are one thread walking files: a single reader.
  const importSeconds = plan.codeReadBytes / readBytesPerSecond(rates, 1, imageSource);
  const weightsBytes = plan.weightsInImage ? plan.weightsReadBytes : engine.weightsBytes;
  // Weights outside the image are wherever the scenario says.
  const weightsSource = plan.weightsInImage ? imageSource : weightsSourceOf(engine);
  const tail = engineTailSeconds(engine, physics);
  return [
    {
      phase: "start",
      seconds: engine.initSeconds + importSeconds,
      bytes: Math.round(plan.codeReadBytes),
    },
    {
      phase: "load_weights",
      seconds: loadLocalWeightsSeconds(
        weightsBytes,
        loaderShape(engine),
        weightsSource,
        rates,
        physics,
      ),
      bytes: Math.round(weightsBytes),
    },
    { phase: "compile", seconds: tail.compile, bytes: 0 },
    { phase: "graph_capture", seconds: tail.graphCapture, bytes: 0 },
    { phase: "warmup", seconds: tail.warmup, bytes: 0 },
  ];
}
