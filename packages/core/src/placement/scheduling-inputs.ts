import { z } from "zod";
import { ScenarioEngine, ScenarioLayer } from "../cold-start-model/index.ts";
import type { NodeState, Objective, StartPath } from "../vocabulary/index.ts";
import {
  nodeScenarioHost,
  type NodeHostColumns,
  type SchedulingDeployment,
  type SchedulingEndpoint,
  type SchedulingNode,
  type SleepingReplica,
} from "../scheduling/index.ts";

// Rows → the plain scheduling snapshot the pure decisions read (scheduling/start-option.ts).
// The JSON columns are parsed here, once, with the cold-start model's own schemas: a
// deployment whose stored figures do not parse is a bug worth a loud error, not a guess.

const StoredLayers = z.array(ScenarioLayer).min(1);
/** engineProfile holds the engine's figures; weights come from the model artifact. */
const StoredEngineProfile = ScenarioEngine.omit({
  weightsBytes: true,
  warmCaches: true,
  weightsSource: true,
}).extend({
  readFraction: z.number().min(0).max(1).optional(),
});

/** Share of the image read before ready when the deployment does not say (weights + imports). */
export const DEFAULT_IMAGE_READ_FRACTION = 0.9;

export interface DeploymentRow {
  id: string;
  endpointId: string;
  imageDigest: string;
  estargzDigest: string | null;
  modelBytes: bigint;
  imageLayers: unknown;
  engineProfile: unknown;
}

export function schedulingDeployment(row: DeploymentRow): SchedulingDeployment {
  const layers = StoredLayers.parse(row.imageLayers);
  const profile = StoredEngineProfile.parse(row.engineProfile);
  const { readFraction, ...engine } = profile;
  return {
    id: row.id,
    endpointId: row.endpointId,
    imageDigest: row.imageDigest,
    estargzDigest: row.estargzDigest,
    modelBytes: Number(row.modelBytes),
    imageLayers: layers,
    imageReadFraction: readFraction ?? DEFAULT_IMAGE_READ_FRACTION,
    engine: { ...engine, weightsBytes: Number(row.modelBytes), warmCaches: false },
  };
}

export interface EndpointRow {
  id: string;
  gpuType: string;
  gpuCount: number;
  allowedPaths: StartPath[];
  objective: Objective;
}

export function schedulingEndpoint(row: EndpointRow): SchedulingEndpoint {
  return {
    id: row.id,
    gpuType: row.gpuType,
    gpuCount: row.gpuCount,
    allowedPaths: row.allowedPaths,
    objective: row.objective,
  };
}

export interface NodeRow extends NodeHostColumns {
  id: string;
  name: string;
  state: NodeState;
  gpuModel: string;
  gpuCount: number;
  driverVersion: string | null;
  cudaVersion: string | null;
  /** The node's engines send and receive weights through ModelExpress (absent: an older read). */
  peerTransfer?: boolean;
}

export function schedulingNode(
  row: NodeRow,
  held: {
    reservedGpus: number;
    imageDigests: string[];
    snapshotIds: string[];
    warmReplicas: { replicaId: string; deploymentId: string }[];
    sleepingReplicas?: SleepingReplica[];
    startsInFlight: number;
  },
): SchedulingNode {
  return {
    id: row.id,
    name: row.name,
    state: row.state,
    gpuModel: row.gpuModel,
    gpuCount: row.gpuCount,
    freeGpus: Math.max(0, row.gpuCount - held.reservedGpus),
    driverVersion: row.driverVersion,
    cudaVersion: row.cudaVersion,
    host: nodeScenarioHost(row),
    // Agents do not report stargz-snapshotter yet: assume it, and a host that lacks it
    // refuses the lazy start with a reason, which the fallback turns into the next option.
    estargzSupported: true,
    cachedImageDigests: held.imageDigests,
    localSnapshotIds: held.snapshotIds,
    idleWarmReplicas: held.warmReplicas,
    ...(held.sleepingReplicas?.length ? { sleepingReplicas: held.sleepingReplicas } : {}),
    ...(row.peerTransfer === false ? { peerTransfer: false } : {}),
    startsInFlight: held.startsInFlight,
  };
}
