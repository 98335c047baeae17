import type { Db } from "@thaw/db";
import { toDeploymentView, type DeploymentRecord } from "../deployments/deployment-record.ts";
import { effectiveWaitPrice } from "../scheduling/wait-price.ts";
import type { Objective, StartPath } from "../vocabulary/index.ts";
import type { EndpointView } from "./endpoint-spec.ts";

interface EndpointRecord {
  id: string;
  slug: string;
  name: string;
  gpuType: string;
  gpuCount: number;
  minReplicas: number;
  maxReplicas: number;
  desiredReplicas: number;
  scaleToZeroIdleSeconds: number;
  allowedPaths: StartPath[];
  objective: Objective;
  targetConcurrency: number;
  gpuSecondsPerWaitSecond: number | null;
  /** The org's default price of waiting (its endpoints without their own follow it). */
  org: { gpuSecondsPerWaitSecond: number | null };
  version: number;
  createdAt: Date;
  updatedAt: Date;
  activeDeployment: DeploymentRecord | null;
}

/** What toEndpointView needs besides the endpoint's row. */
export const ENDPOINT_VIEW_INCLUDE = {
  activeDeployment: true,
  org: { select: { gpuSecondsPerWaitSecond: true } },
} as const;

export function toEndpointView(row: EndpointRecord): EndpointView {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    gpuType: row.gpuType,
    gpuCount: row.gpuCount,
    minReplicas: row.minReplicas,
    maxReplicas: row.maxReplicas,
    desiredReplicas: row.desiredReplicas,
    scaleToZeroIdleSeconds: row.scaleToZeroIdleSeconds,
    allowedPaths: row.allowedPaths,
    objective: row.objective,
    targetConcurrency: row.targetConcurrency,
    gpuSecondsPerWaitSecond: row.gpuSecondsPerWaitSecond,
    effectiveGpuSecondsPerWaitSecond: effectiveWaitPrice(
      row.gpuSecondsPerWaitSecond,
      row.org.gpuSecondsPerWaitSecond,
    ),
    version: row.version,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    activeDeployment: row.activeDeployment && toDeploymentView(row.activeDeployment),
  };
}

/** An endpoint of the org (already authorised and found by the caller) as the API answers it. */
export async function loadEndpointView(db: Db, orgId: string, id: string): Promise<EndpointView> {
  const row = await db.endpoint.findFirstOrThrow({
    where: { id, orgId },
    include: ENDPOINT_VIEW_INCLUDE,
  });
  return toEndpointView(row);
}
