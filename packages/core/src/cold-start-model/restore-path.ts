import {
  diskReadBytesPerSecond,
  hostRates,
  loadLocalWeightsSeconds,
  pageCacheReadBytesPerSecond,
  weightsSourceOf,
  writtenBytesSource,
  type HostRates,
  type LoaderShape,
} from "./engine-phases";
import { peerWeightsTiming } from "./peer-path";
import { PHYSICS, type Physics } from "./physical-constants";
import type {
  ColdStartScenario,
  PhaseTiming,
  ScenarioEngine,
  ScenarioHost,
  ScenarioPeer,
  ScenarioRestore,
} from "./scenario-schema";

/** What the restore path reads of a scenario. */
type RestoreScenario = Pick<ColdStartScenario, "host" | "engine" | "restore"> &
  Partial<Pick<ColdStartScenario, "peer">>;

// Restore: fetch the CRIU image if the store holds it, restore the process (pages back by
// preadv), toggle CUDA state back with cuda-checkpoint, then put the weights back as the
// sleep level requires and wake the engine. Two of the field's speed-ups are host and
// scenario figures (NVIDIA Dynamo Snapshot, 2026): CRIU restoring pages with several workers
// (`host.restoreStreams`), and the weights restored apart from the process image
// (`restore.stageWeights`: staged into the page cache while CRIU works).

export function restorePhases(
  scenario: RestoreScenario,
  rates: HostRates,
  physics: Physics,
): PhaseTiming[] {
  const { restore, engine } = scenario;
  const phases: PhaseTiming[] = [];
  const streamed = !restore.local && restore.imageSource === "stream";
  if (!restore.local) {
    // Parallel ranged GETs from the object store, written to local disk as they arrive; or,
    // streamed, put straight into the restored process's pages: then the fetch is the page
    // restore, bound by the slower of the two, and the disk is not touched.
    const fetchBytesPerSecond = streamed
      ? Math.min(
          rates.nicBytesPerSecond,
          physics.snapshotFetchStreams * rates.registryStreamBytesPerSecond,
          (scenario.host.restoreStreams ?? 1) * physics.criuPageRestoreBytesPerSecond,
        )
      : Math.min(
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
  const restoreSeconds =
    physics.criuBaseSeconds +
    (streamed ? 0 : restore.snapshotBytes / criuPageBytesPerSecond(scenario, rates, physics)) +
    physics.cudaToggleSeconds +
    gpuStateBytes / physics.cudaCheckpointRestoreBytesPerSecond;
  phases.push({ phase: "restore", seconds: restoreSeconds, bytes: restore.snapshotBytes });
  if (restore.sleepLevel === 2 && restore.weightsFrom === "peer" && scenario.peer)
    // The woken engine's reload receives them from a serving replica (its loader is
    // ModelExpress's): after the wake, since the source writes into the memory it allocates.
    phases.push(peerWeightsTiming({ ...scenario, peer: scenario.peer }, rates, physics));
  else if (restore.sleepLevel === 2 && restore.stageWeights)
    phases.push(...stagedReloadPhases(scenario, restoreSeconds, rates, physics));
  else if (restore.sleepLevel !== 0)
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

/** Readers Thaw's agents stage a restore's weights with (the scenario's `stagingReaders` default). */
export const WEIGHT_STAGING_READERS = 8;

/**
 * Whether staging a restore's weights apart pays on this host (the scheduler's choice, which
 * the start request carries to the agent): only a sleep-level-2 image lacks its weights, and
 * staging pays where the staging readers outrun the engine's own reload and the copy from
 * memory after it. On gp3 it does not (one reader already meets the 125 MiB/s ceiling); on a
 * fast volume it halves the restore (apps/agent/scenarios).
 */
export function weightsStagingPays(input: RestoreChoiceInput): boolean {
  return chooseRestoreWeights(input).stageWeights;
}

/**
 * Whether a sleep-level-2 restore should have its weights sent by a serving replica on another
 * host (`peer`) rather than read from this host's files, staged or not as `stageWeights` says
 * (the scheduler's choice, carried to the agent as the start's peer source): where the copy
 * outruns the disk, e.g. a gp3 volume's 125 MiB/s against a 25 Gbps link.
 */
export function restoreWeightsFromPeerPays(
  input: RestoreChoiceInput & { peer: ScenarioPeer; stageWeights: boolean },
): boolean {
  if (input.sleepLevel !== 2 || input.engine.weightsBytes <= 0) return false;
  return (
    restoreChoiceSeconds(input, { stageWeights: false, weightsFrom: "peer" }, input.peer) <
    restoreChoiceSeconds(input, { stageWeights: input.stageWeights })
  );
}

/**
 * Where a restore's weights come from, the scheduler's whole choice in one pass: only a
 * sleep-level-2 image lacks them; they are staged apart where that beats the engine's own
 * reload (weightsStagingPays), and sent by `peer` where that beats both
 * (restoreWeightsFromPeerPays). Each alternative is simulated once.
 */
export function chooseRestoreWeights(input: RestoreChoiceInput & { peer?: ScenarioPeer }): {
  stageWeights: boolean;
  weightsFromPeer: boolean;
} {
  if (input.sleepLevel !== 2 || input.engine.weightsBytes <= 0)
    return { stageWeights: false, weightsFromPeer: false };
  const unstaged = restoreChoiceSeconds(input, { stageWeights: false });
  const staged = restoreChoiceSeconds(input, { stageWeights: true });
  const local = Math.min(staged, unstaged);
  const fromPeer = input.peer
    ? restoreChoiceSeconds(input, { stageWeights: false, weightsFrom: "peer" }, input.peer)
    : Number.POSITIVE_INFINITY;
  return { stageWeights: staged < unstaged, weightsFromPeer: fromPeer < local };
}

/** What the scheduler knows of a restore it is choosing how to do. */
interface RestoreChoiceInput {
  host: ScenarioHost;
  engine: ScenarioEngine;
  snapshotBytes: number;
  sleepLevel: 0 | 1 | 2;
  /** The engine's reload readers: 1 for vLLM's own `reload_weights`. */
  reloadConcurrency?: number;
}

function restoreChoiceSeconds(
  input: RestoreChoiceInput,
  how: Partial<Pick<ScenarioRestore, "stageWeights" | "weightsFrom">>,
  peer?: ScenarioPeer,
): number {
  const restore: ScenarioRestore = {
    snapshotBytes: input.snapshotBytes,
    local: true,
    sleepLevel: input.sleepLevel,
    reloadConcurrency: input.reloadConcurrency ?? 1,
    hostBackup: "pageable",
    imageSource: "disk",
    stageWeights: false,
    stagingReaders: WEIGHT_STAGING_READERS,
    weightsFrom: "local",
    ...how,
  };
  const rates = hostRates(input.host, PHYSICS);
  return restorePhases(
    { host: input.host, engine: input.engine, restore, ...(peer ? { peer } : {}) },
    rates,
    PHYSICS,
  ).reduce((sum, timing) => sum + timing.seconds, 0);
}

/**
 * CRIU puts the image's pages back with preadv into the new address space: each worker is
 * bound by page faults and copies, all of them together by where the pages are (the device,
 * or the page cache when the image was written or fetched here moments ago).
 */
function criuPageBytesPerSecond(
  scenario: RestoreScenario,
  rates: HostRates,
  physics: Physics,
): number {
  const { restore } = scenario;
  const streams = scenario.host.restoreStreams ?? 1;
  // An image fetched from the store moments ago is still cached if it fits beside the
  // process it is being restored into.
  const source =
    restore.imageSource === "page-cache" || restore.local
      ? restore.imageSource
      : writtenBytesSource(restore.snapshotBytes, restore.snapshotBytes, rates);
  // Cached pages are never slower to read than the device they came from.
  const sourceBytesPerSecond =
    source === "page-cache"
      ? Math.max(pageCacheReadBytesPerSecond(rates, streams), rates.diskReadBytesPerSecond)
      : rates.diskReadBytesPerSecond;
  return Math.min(sourceBytesPerSecond, streams * physics.criuPageRestoreBytesPerSecond);
}

/**
 * Weights restored apart (sleep level 2): the agent's readers pull the weight files into the
 * page cache from the moment the restore begins, sharing the device with CRIU's page reads
 * when the image is on it too; the engine's reload after the wake then copies from memory.
 * `load_weights` is the staging's tail past the restore, then that reload.
 */
function stagedReloadPhases(
  scenario: RestoreScenario,
  restoreSeconds: number,
  rates: HostRates,
  physics: Physics,
): PhaseTiming[] {
  const { restore, engine } = scenario;
  if (scenario.host.gpuMemoryService)
    return deviceStagedPhases(scenario, restoreSeconds, rates, physics);
  let stagedAfterSeconds = 0;
  if (weightsSourceOf(engine) === "disk" && engine.weightsBytes > 0)
    stagedAfterSeconds = Math.max(
      engine.weightsBytes / diskReadBytesPerSecond(rates, restore.stagingReaders),
      deviceSharedWithCriuSeconds(scenario, rates),
    );
  const waitSeconds = Math.max(0, stagedAfterSeconds - restoreSeconds);
  const cached = { ...engine, weightsSource: "page-cache" as const };
  return reinstatedWeightsPhases(2, restore, cached, rates, physics).map((timing) => ({
    ...timing,
    seconds: timing.seconds + waitSeconds,
  }));
}

/**
 * Weights restored apart into device memory, on a host whose engines keep their weights in a
 * GPU Memory Service (NVIDIA Dynamo's GMS, which Dynamo Snapshot uses for "concurrent weight
 * restoration"): from the restore's start, the GMS loader reads the weights with the staging
 * readers and copies each chunk to the GPU as it arrives (pinned, overlapped), sharing the
 * device with CRIU's page reads when the image is on it too. The woken engine maps the
 * loaded allocations (GMS's remap, a cost per byte) instead of reloading. `load_weights` is
 * the loader's tail past the restore, then the mapping.
 */
function deviceStagedPhases(
  scenario: RestoreScenario,
  restoreSeconds: number,
  rates: HostRates,
  physics: Physics,
): PhaseTiming[] {
  const { restore, engine } = scenario;
  if (engine.weightsBytes <= 0) return [];
  const loadedAfterSeconds = Math.max(
    loadLocalWeightsSeconds(
      engine.weightsBytes,
      { readers: restore.stagingReaders, overlapped: true },
      weightsSourceOf(engine),
      rates,
      physics,
    ),
    deviceSharedWithCriuSeconds(scenario, rates),
  );
  return [
    {
      phase: "load_weights",
      seconds:
        Math.max(0, loadedAfterSeconds - restoreSeconds) +
        engine.weightsBytes / physics.deviceRemapBytesPerSecond,
      bytes: engine.weightsBytes,
    },
  ];
}

/**
 * Staged weights read from the disk while CRIU reads the image from it too: both cross the
 * device once, so neither is done before the device has carried them both (0 otherwise).
 */
function deviceSharedWithCriuSeconds(scenario: RestoreScenario, rates: HostRates): number {
  const { restore, engine } = scenario;
  return weightsSourceOf(engine) === "disk" && restore.imageSource === "disk"
    ? (restore.snapshotBytes + engine.weightsBytes) / rates.diskReadBytesPerSecond
    : 0;
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
