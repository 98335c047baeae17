import type { ScenarioLayer } from "@thaw/protocol";
import type { DeploymentStatus } from "../vocabulary/index.ts";
import type { DeploymentView, EngineProfile } from "./deployment-spec.ts";

/** A Deployment row as the database holds it (sizes as bigint, JSON columns untyped). */
export interface DeploymentRecord {
  id: string;
  endpointId: string;
  version: number;
  status: DeploymentStatus;
  imageRef: string;
  imageDigest: string;
  imageBytes: bigint;
  imageLayers: unknown;
  estargzImageRef: string | null;
  estargzDigest: string | null;
  modelSource: string;
  modelBytes: bigint;
  modelFormat: string;
  engine: string;
  engineArgs: unknown;
  engineProfile: unknown;
  createdAt: Date;
}

export function toDeploymentView(row: DeploymentRecord): DeploymentView {
  return {
    id: row.id,
    endpointId: row.endpointId,
    version: row.version,
    status: row.status,
    imageRef: row.imageRef,
    imageDigest: row.imageDigest,
    imageBytes: Number(row.imageBytes),
    imageLayers: row.imageLayers as ScenarioLayer[],
    estargzImageRef: row.estargzImageRef,
    estargzDigest: row.estargzDigest,
    modelSource: row.modelSource,
    modelBytes: Number(row.modelBytes),
    modelFormat: row.modelFormat,
    engine: row.engine,
    engineArgs: row.engineArgs as string[],
    engineProfile: row.engineProfile as Partial<EngineProfile>,
    createdAt: row.createdAt.toISOString(),
  };
}
