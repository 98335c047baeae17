import type { Db } from "@thaw/db";
import { z } from "zod";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { findEndpoint } from "../endpoints/find-endpoint.ts";
import { parseInput } from "../errors/index.ts";
import { EffectiveWaitPriceView } from "../endpoints/endpoint-spec.ts";
import { PredictionCalibrationView } from "../endpoints/rest-schemas.ts";
import {
  ActorType,
  DeploymentStatus,
  GPU_HOLDING_REPLICA_STATES,
  Objective,
  ReplicaState,
  ScaleSource,
  StartPath,
} from "../vocabulary/index.ts";
import { EndpointStatus, endpointStatus } from "./endpoint-status.ts";
import { loadColdStartSummaries } from "./load-cold-start-summaries.ts";
import { TimeToReadySummary } from "./summarize-time-to-ready.ts";
import { loadPredictionCalibration } from "./load-prediction-calibration.ts";
import { CALIBRATION_TARGET } from "./prediction-calibration.ts";
import { effectiveWaitPrice } from "../scheduling/wait-price.ts";
import { replicaReasonText } from "../placement/replica-reason.ts";

export const GetEndpointDetailInput = z.object({ endpoint: z.string().min(1).max(100) }).strict();

/** One endpoint's page (getEndpointDetail). */
export const EndpointDetail = z.object({
  status: EndpointStatus,
  endpoint: z.object({
    id: z.string(),
    slug: z.string(),
    name: z.string(),
    gpuType: z.string(),
    gpuCount: z.number(),
    minReplicas: z.number(),
    maxReplicas: z.number(),
    desiredReplicas: z.number(),
    scaleToZeroIdleSeconds: z.number(),
    targetConcurrency: z.number(),
    allowedPaths: z.array(StartPath),
    objective: Objective,
    activeDeploymentId: z.string().nullable(),
    gpuSecondsPerWaitSecond: z.number().nullable(),
    effectiveGpuSecondsPerWaitSecond: EffectiveWaitPriceView,
  }),
  replicaCounts: z.object({
    ready: z.number(),
    warm: z.number(),
    /** Engines asleep in their nodes' memory, holding no GPU (the wake path). */
    sleeping: z.number(),
    starting: z.number(),
    draining: z.number(),
  }),
  deployments: z.array(
    z.object({
      id: z.string(),
      version: z.number(),
      status: DeploymentStatus,
      imageRef: z.string(),
      imageBytes: z.number(),
      estargzImageRef: z.string().nullable(),
      modelSource: z.string(),
      modelBytes: z.number(),
      modelFormat: z.string(),
      engine: z.string(),
      createdAt: z.date(),
      active: z.boolean(),
    }),
  ),
  replicas: z.array(
    z.object({
      id: z.string(),
      state: ReplicaState,
      deploymentVersion: z.number().nullable(),
      nodeName: z.string().nullable(),
      instanceType: z.string().nullable(),
      reason: z.string().nullable(),
      since: z.date(),
    }),
  ),
  scaleEvents: z.array(
    z.object({
      id: z.string(),
      source: ScaleSource,
      previousDesired: z.number(),
      desired: z.number(),
      reason: z.string(),
      actorType: ActorType,
      createdAt: z.date(),
    }),
  ),
  summary: TimeToReadySummary,
  calibration: PredictionCalibrationView.extend({
    target: z.object({ share: z.number(), tolerance: z.number(), minStarts: z.number() }),
  }),
});
export type EndpointDetail = z.infer<typeof EndpointDetail>;

/** Replicas that hold or are about to hold a GPU (stopped and failed ones are history). */
const LIVE_STATES: ReplicaState[] = ["pending", ...GPU_HOLDING_REPLICA_STATES, "sleeping"];
const DEPLOYMENTS_SHOWN = 50;
const REPLICAS_SHOWN = 200;
const SCALE_EVENTS_SHOWN = 20;

/**
 * One endpoint's page: its configuration, deployments with their status, live replicas
 * (state, node, since when), recent scale events, the headline cold-start figures and how
 * well the predictor's intervals held (prediction-calibration.ts). By
 * slug or id; another org's endpoint is NOT_FOUND.
 */
export async function getEndpointDetail({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: unknown;
  db: Db;
}): Promise<EndpointDetail> {
  assertCan(actor, "endpoints:read");
  const { endpoint: name } = parseInput(GetEndpointDetailInput, input);
  const endpoint = await findEndpoint(db, actor, name);
  const scope = { ...orgScope(actor), endpointId: endpoint.id };
  const [deployments, replicas, scaleEvents, summaries, calibration, org] = await Promise.all([
    db.deployment.findMany({
      where: scope,
      orderBy: { version: "desc" },
      take: DEPLOYMENTS_SHOWN,
      select: {
        id: true,
        version: true,
        status: true,
        imageRef: true,
        imageBytes: true,
        estargzImageRef: true,
        modelSource: true,
        modelBytes: true,
        modelFormat: true,
        engine: true,
        createdAt: true,
      },
    }),
    db.replica.findMany({
      where: { ...scope, state: { in: LIVE_STATES } },
      orderBy: { createdAt: "asc" },
      take: REPLICAS_SHOWN,
      select: {
        id: true,
        state: true,
        deploymentId: true,
        pendingCause: true,
        drainIntent: true,
        reasonDetail: true,
        createdAt: true,
        updatedAt: true,
        readyAt: true,
        node: { select: { name: true, instanceType: true } },
      },
    }),
    db.scaleEvent.findMany({
      where: scope,
      orderBy: { createdAt: "desc" },
      take: SCALE_EVENTS_SHOWN,
      select: {
        id: true,
        source: true,
        previousDesired: true,
        desired: true,
        reason: true,
        actorType: true,
        createdAt: true,
      },
    }),
    loadColdStartSummaries(db, actor.orgId, [endpoint.id]),
    loadPredictionCalibration(db, actor.orgId, endpoint.id),
    db.org.findUniqueOrThrow({
      where: { id: actor.orgId },
      select: { gpuSecondsPerWaitSecond: true },
    }),
  ]);
  const versionOf = new Map(deployments.map((d) => [d.id, d.version]));
  const replicaCounts = {
    ready: replicas.filter((r) => r.state === "ready").length,
    warm: replicas.filter((r) => r.state === "warm").length,
    sleeping: replicas.filter((r) => r.state === "sleeping").length,
    starting: replicas.filter((r) => ["pending", "placed", "starting"].includes(r.state)).length,
    draining: replicas.filter((r) => r.state === "draining").length,
  };
  return {
    status: endpointStatus({
      desired: endpoint.desiredReplicas,
      ready: replicaCounts.ready,
      warm: replicaCounts.warm,
      starting: replicaCounts.starting,
      draining: replicaCounts.draining,
    }),
    endpoint: {
      id: endpoint.id,
      slug: endpoint.slug,
      name: endpoint.name,
      gpuType: endpoint.gpuType,
      gpuCount: endpoint.gpuCount,
      minReplicas: endpoint.minReplicas,
      maxReplicas: endpoint.maxReplicas,
      desiredReplicas: endpoint.desiredReplicas,
      scaleToZeroIdleSeconds: endpoint.scaleToZeroIdleSeconds,
      targetConcurrency: endpoint.targetConcurrency,
      allowedPaths: endpoint.allowedPaths,
      objective: endpoint.objective,
      activeDeploymentId: endpoint.activeDeploymentId,
      gpuSecondsPerWaitSecond: endpoint.gpuSecondsPerWaitSecond,
      effectiveGpuSecondsPerWaitSecond: effectiveWaitPrice(
        endpoint.gpuSecondsPerWaitSecond,
        org.gpuSecondsPerWaitSecond,
      ),
    },
    replicaCounts,
    deployments: deployments.map((d) => ({
      ...d,
      imageBytes: Number(d.imageBytes),
      modelBytes: Number(d.modelBytes),
      active: d.id === endpoint.activeDeploymentId,
    })),
    replicas: replicas.map((r) => ({
      id: r.id,
      state: r.state,
      deploymentVersion: versionOf.get(r.deploymentId) ?? null,
      nodeName: r.node?.name ?? null,
      instanceType: r.node?.instanceType ?? null,
      // Rendered from the cause or intent: the dashboard shows it, nothing decides on it.
      reason: replicaReasonText(r),
      // When the replica entered its current state, as near as the row tells.
      since:
        r.state === "pending"
          ? r.createdAt
          : r.state === "ready" && r.readyAt
            ? r.readyAt
            : r.updatedAt,
    })),
    scaleEvents,
    summary: summaries.get(endpoint.id)!,
    calibration: { ...calibration, target: CALIBRATION_TARGET },
  };
}
