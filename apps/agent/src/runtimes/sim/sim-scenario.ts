import { createHash } from "node:crypto";
import {
  type ColdStartScenarioInput,
  type HostProfile,
  scenarioHostFromProfile,
} from "@thaw/core/cold-start-model";
import { type ReplicaSimulation, type StartReplicaRequest } from "@thaw/protocol";

// From a start request and what this simulated host holds to the cold-start model's
// scenario: the host's published figures, the deployment's image and engine, and the
// host's state — compile caches warm after an earlier start of the deployment here, the
// snapshot local or in the store — and what the control plane sent along: a stored kernel
// cache to fetch, a serving replica to take a restore's weights from.

/**
 * What a deployment without a `simulation` block is modelled as: vLLM serving
 * Llama-3.2-3B (6 GB of bf16 weights baked into a vllm-openai image of 15.5 GB), the
 * engine figures of the field notes' "Fast vLLM" measurements.
 */
export const DEFAULT_SIMULATION: ReplicaSimulation = {
  layers: [
    { bytes: 6_000_000_000, compression: "gzip-6", content: "weights" },
    { bytes: 8_000_000_000, compression: "gzip-6", content: "code" },
    { bytes: 1_500_000_000, compression: "gzip-6", content: "code" },
  ],
  readFraction: 0.45,
  engine: {
    weightsBytes: 6_000_000_000,
    loader: "sequential",
    loaderConcurrency: 1,
    initSeconds: 9.3,
    compileSeconds: 27.03,
    graphCaptureSeconds: 34,
    warmupSeconds: 40,
  },
};

export interface HostState {
  warmCaches: boolean;
  /** CRIU's page-restore workers, as the host reports them (1 when absent). */
  restoreStreams?: number;
  /** The host's engines keep their weights in a GPU Memory Service, as the host reports it. */
  gpuMemoryService?: boolean;
  snapshotLocal: boolean;
  /** The wake path: the level the sleeping engine was put to. */
  sleepLevel?: 1 | 2;
}

export function buildScenario(
  profile: HostProfile,
  request: StartReplicaRequest,
  state: HostState,
  seed: number,
): ColdStartScenarioInput {
  const simulation = simulationOf(request);
  const sleepLevel = request.deployment.snapshot?.sleepLevel ?? 2;
  const reloadConcurrency = simulation.snapshot?.reloadConcurrency ?? 1;
  const restoreWeightsFromPeer = request.path === "restore" && request.peerSource !== undefined;
  const kernelCacheFetch =
    request.path === "pull" || request.path === "lazy" ? request.kernelCache?.fetch : undefined;
  // A cached image runs from local disk: modelled as a pull whose fetch is skipped (the
  // caller replaces the fetch phase), whichever path was asked for.
  return {
    seed,
    noise: true,
    host: {
      ...scenarioHostFromProfile(profile),
      ...(state.restoreStreams ? { restoreStreams: state.restoreStreams } : {}),
      ...(state.gpuMemoryService ? { gpuMemoryService: true } : {}),
    },
    image: {
      // A peer start mounts the eStargz variant when the scheduler said so (the model's choice).
      format:
        request.path === "lazy" ||
        (request.path === "peer" &&
          request.peerSource?.lazyImage === true &&
          request.deployment.estargzImageRef !== undefined)
          ? "estargz"
          : "oci",
      layers: simulation.layers,
      readFraction: simulation.readFraction,
    },
    engine: { ...simulation.engine, warmCaches: state.warmCaches },
    path: request.path,
    ...(simulation.lazy ? { lazy: simulation.lazy } : {}),
    restore: {
      snapshotBytes: simulation.snapshot?.bytes ?? 3_400_000_000,
      local: state.snapshotLocal,
      sleepLevel,
      reloadConcurrency,
      // As the scheduler asked (the containerd runtime does the same).
      stageWeights: request.deployment.snapshot?.stageWeights ?? false,
      // A level-2 restore given a serving replica: the woken engine's reload receives the
      // weights from it (ModelExpress) instead of reading this host's files.
      ...(restoreWeightsFromPeer ? { weightsFrom: "peer" as const } : {}),
    },
    ...(state.sleepLevel ? { wake: { sleepLevel: state.sleepLevel } } : {}),
    // The source's figures as the control plane sent them (absent: a source like this host).
    ...(request.path === "peer" || restoreWeightsFromPeer
      ? { peer: { ...simulation.peer, gpus: Math.max(1, request.gpus.length) } }
      : {}),
    // A stored kernel cache to fetch before compile: the model adds the fetch unless this host
    // kept its own caches of the deployment (`engine.warmCaches`), then compiles warm.
    ...(kernelCacheFetch ? { kernelCache: { bytes: kernelCacheFetch.bytes } } : {}),
  };
}

export function simulationOf(request: StartReplicaRequest): ReplicaSimulation {
  return request.deployment.simulation ?? DEFAULT_SIMULATION;
}

/** Compile caches and warm replicas belong to a deployment (its id, else its image). */
export function deploymentKey(request: StartReplicaRequest): string {
  const { deployment } = request;
  return deployment.deploymentId ?? deployment.imageDigest ?? deployment.imageRef;
}

/** The digest a sim host lists for an image: the real one when given, else one derived from the reference. */
export function imageDigestOf(request: StartReplicaRequest, estargz: boolean): string {
  const { deployment } = request;
  const given = estargz ? deployment.estargzImageDigest : deployment.imageDigest;
  if (given) return given;
  const ref = estargz ? (deployment.estargzImageRef ?? deployment.imageRef) : deployment.imageRef;
  return `sha256:${createHash("sha256").update(ref).digest("hex")}`;
}

export function imageBytesOf(request: StartReplicaRequest): number {
  return simulationOf(request).layers.reduce((sum, layer) => sum + layer.bytes, 0);
}
