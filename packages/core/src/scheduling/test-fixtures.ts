import { HOST_PROFILES, scenarioHostFromProfile } from "../cold-start-model/index";
import type {
  SchedulingDeployment,
  SchedulingEndpoint,
  SchedulingNode,
  SchedulingSnapshot,
} from "./start-option";

// Shared test data: an L40S fleet and an 8B-parameter model (16 GB of weights in the image).

export const L40S = "NVIDIA L40S";

export function makeNode(overrides: Partial<SchedulingNode> = {}): SchedulingNode {
  return {
    id: "node-1",
    name: "node-1",
    state: "ready",
    gpuModel: L40S,
    gpuCount: 4,
    freeGpus: 4,
    driverVersion: "550.54",
    cudaVersion: "12.4",
    host: scenarioHostFromProfile(HOST_PROFILES["g6e.xlarge"]),
    estargzSupported: true,
    cachedImageDigests: [],
    localSnapshotIds: [],
    idleWarmReplicas: [],
    startsInFlight: 0,
    ...overrides,
  };
}

export const endpoint: SchedulingEndpoint = {
  id: "endpoint-1",
  gpuType: L40S,
  gpuCount: 1,
  allowedPaths: ["warm", "wake", "restore", "peer", "lazy", "pull"],
  objective: "mean",
};

export const deployment: SchedulingDeployment = {
  id: "deployment-1",
  endpointId: "endpoint-1",
  imageDigest: "sha256:plain",
  estargzDigest: "sha256:estargz",
  modelBytes: 16_000_000_000,
  imageLayers: [
    { bytes: 16_000_000_000, compression: "gzip-6", content: "weights" },
    { bytes: 6_000_000_000, compression: "gzip-6", content: "code" },
  ],
  imageReadFraction: 0.8,
  engine: {
    weightsBytes: 16_000_000_000,
    loader: "sequential",
    loaderConcurrency: 1,
    initSeconds: 15,
    compileSeconds: 30,
    graphCaptureSeconds: 10,
    warmupSeconds: 3,
    warmCaches: false,
  },
};

export function makeSnapshot(overrides: Partial<SchedulingSnapshot> = {}): SchedulingSnapshot {
  return {
    id: "snapshot-1",
    deploymentId: deployment.id,
    gpuModel: L40S,
    driverVersion: "550.54",
    cudaVersion: "12.4",
    status: "ready",
    bytes: 3_400_000_000,
    sleepLevel: 2,
    inStore: true,
    ...overrides,
  };
}
