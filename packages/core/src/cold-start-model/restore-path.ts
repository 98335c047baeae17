import {
  loadLocalWeightsSeconds,
  weightsSourceOf,
  type HostRates,
  type LoaderShape,
} from "./engine-phases";
import type { Physics } from "./physical-constants";
import type { ColdStartScenario, PhaseTiming } from "./scenario-schema";

// Restore: fetch the CRIU image if the store holds it, restore the process (pages back by
// preadv), toggle CUDA state back with cuda-checkpoint, then put the weights back as the
// sleep level requires and wake the engine.

export function restorePhases(
  scenario: ColdStartScenario,
  rates: HostRates,
  physics: Physics,
): PhaseTiming[] {
  const { restore, engine } = scenario;
  const phases: PhaseTiming[] = [];
  if (!restore.local) {
    // Parallel ranged GETs from the object store, written to local disk as they arrive.
    const fetchBytesPerSecond = Math.min(
      rates.nicBytesPerSecond,
      physics.snapshotFetchStreams * rates.registryStreamBytesPerSecond,
      rates.diskWriteBytesPerSecond,
    );
    phases.push({
      phase: "fetch_snapshot",
      seconds: 2 * rates.rttSeconds + restore.snapshotBytes / fetchBytesPerSecond,
      bytes: restore.snapshotBytes,
    });
  }
  // Sleep level 0 keeps device memory inside the image: everything beyond the server's own
  // host memory is GPU state that cuda-checkpoint copies back, slowly.
  const gpuStateBytes =
    restore.sleepLevel === 0
      ? Math.max(0, restore.snapshotBytes - physics.engineHostProcessBytes)
      : 0;
  const pageBytesPerSecond = Math.min(
    rates.diskReadBytesPerSecond,
    physics.criuPageRestoreBytesPerSecond,
  );
  phases.push({
    phase: "restore",
    seconds:
      physics.criuBaseSeconds +
      restore.snapshotBytes / pageBytesPerSecond +
      physics.cudaToggleSeconds +
      gpuStateBytes / physics.cudaCheckpointRestoreBytesPerSecond,
    bytes: restore.snapshotBytes,
  });
  if (restore.sleepLevel !== 0)
    phases.push(...reinstatedWeightsPhases(restore.sleepLevel, restore, engine, rates, physics));
  // GPU state that cuda-checkpoint put back is mapped into the engine's allocations before
  // the first forward pass (NVIDIA Dynamo's "wake / remap" stage grows with the weights). A
  // sleep-mode wake maps each allocation as it copies into it: the copy above is its cost.
  const remapSeconds =
    restore.sleepLevel === 0 ? engine.weightsBytes / physics.deviceRemapBytesPerSecond : 0;
  phases.push({
    phase: "warmup",
    seconds: physics.engineWakeSeconds + remapSeconds,
    bytes: 0,
  });
  return phases;
}

/**
 * The weights put back into a woken engine (after a restore, or a live engine's wake): at
 * sleep level 1 from its host backup, at level 2 read again by its loader.
 */
export function reinstatedWeightsPhases(
  sleepLevel: 1 | 2,
  how: { hostBackup: "pinned" | "pageable"; reloadConcurrency: number },
  engine: ColdStartScenario["engine"],
  rates: HostRates,
  physics: Physics,
): PhaseTiming[] {
  if (engine.weightsBytes <= 0) return [];
  if (sleepLevel === 1) {
    // Weights come back from the host backup: a DMA per allocation from pinned memory (a live
    // engine's own backup, a staging daemon's registered hugepages), or staged through a
    // bounce buffer from ordinary pages (a backup a CRIU restore just put back).
    const copyFraction =
      how.hostBackup === "pinned" ? physics.wakeCopyFraction : physics.pageableCopyFraction;
    const seconds =
      rates.pcieBytesPerSecond > 0
        ? engine.weightsBytes / (rates.pcieBytesPerSecond * copyFraction)
        : 0;
    return [{ phase: "load_weights", seconds, bytes: engine.weightsBytes }];
  }
  // One reader: vLLM's reload_weights, tensor by tensor from pageable memory. More: chunked,
  // double-buffered pinned reload (reading the next chunk while the last one is DMA'd).
  const shape: LoaderShape =
    how.reloadConcurrency > 1
      ? { readers: how.reloadConcurrency, overlapped: true }
      : { readers: 1, overlapped: false };
  return [
    {
      phase: "load_weights",
      seconds: loadLocalWeightsSeconds(
        engine.weightsBytes,
        shape,
        weightsSourceOf(engine),
        rates,
        physics,
      ),
      bytes: engine.weightsBytes,
    },
  ];
}
