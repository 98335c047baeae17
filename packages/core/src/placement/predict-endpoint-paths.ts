import { prismaRows, type DbClient } from "@thaw/db";
import { z } from "zod";
import { assertCan, type Actor } from "../auth/index.ts";
import { findEndpoint } from "../endpoints/find-endpoint.ts";
import { AppError } from "../errors/index.ts";
import { enumerateStartOptions, optionPredictor } from "../scheduling/index.ts";
import { StartPath } from "../vocabulary/index.ts";
import {
  loadDeploymentStartInputs,
  loadPeerSources,
  loadSchedulingNodes,
} from "./load-placement-state.ts";
import { schedulingDeployment, schedulingEndpoint } from "./scheduling-inputs.ts";

export const EndpointPredictionsResponse = z
  .object({
    endpoint: z.object({ id: z.uuid(), slug: z.string() }),
    objective: z.enum(["mean", "p90"]),
    paths: z.array(
      z.object({
        path: StartPath,
        available: z.boolean(),
        /** The best node for this path right now, and what it holds. */
        nodeName: z.string().nullable(),
        locality: z.string().nullable(),
        meanSeconds: z.number().nullable(),
        p90Seconds: z.number().nullable(),
        samples: z.number().int(),
        /** Why the path is not available now (no snapshot, no free GPU, not allowed…). */
        reason: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: "EndpointPredictions" });
export type EndpointPredictionsResponse = z.infer<typeof EndpointPredictionsResponse>;

/**
 * The predicted time-to-ready of each start path of the endpoint's next replica, on the node
 * that would serve it best right now — the scheduler's own predictor, so an autoscaler can
 * size its headroom by what a scale-up will actually cost.
 */
export async function predictEndpointPaths({
  actor,
  endpoint,
  db,
}: {
  actor: Actor;
  endpoint: string;
  db: DbClient;
}): Promise<EndpointPredictionsResponse> {
  assertCan(actor, "endpoints:read");
  const row = await findEndpoint(db, actor, endpoint);
  if (!row.activeDeploymentId)
    throw new AppError("CONFLICT", `Endpoint '${row.slug}' has no active deployment yet.`, {
      field: "endpoint",
    });
  const deploymentRow = await db.deployment.findUniqueOrThrow({
    where: { id: row.activeDeploymentId },
  });
  const target = schedulingEndpoint(row);
  const modelled = schedulingDeployment(deploymentRow);
  const [nodes, { snapshots, history, kernelCaches }, peerSources] = await Promise.all([
    loadSchedulingNodes(prismaRows(db), row.orgId, target.gpuType, {
      deploymentId: modelled.id,
      imageDigests: [modelled.imageDigest, modelled.estargzDigest].filter(
        (d): d is string => d !== null,
      ),
      gpus: target.gpuCount,
    }),
    loadDeploymentStartInputs(prismaRows(db), row.orgId, modelled),
    loadPeerSources(prismaRows(db), row.orgId, modelled.id),
  ]);
  const deployment = { ...modelled, kernelCaches };
  const { feasible, infeasible } = enumerateStartOptions({
    endpoint: target,
    deployment,
    nodes,
    snapshots,
    peerSources,
  });
  const nodesById = new Map(nodes.map((n) => [n.id, n]));
  const predict = optionPredictor(deployment, snapshots, history);
  const paths = StartPath.options.map((path) => {
    const predicted = feasible
      .filter((o) => o.path === path)
      .map((option) => ({ option, prediction: predict(nodesById.get(option.nodeId)!, option) }))
      .sort((a, b) => a.prediction.meanSeconds - b.prediction.meanSeconds);
    const best = predicted[0];
    if (!best) {
      const reasons = infeasible.filter((i) => i.path === path).map((i) => i.reason);
      return {
        path,
        available: false,
        nodeName: null,
        locality: null,
        meanSeconds: null,
        p90Seconds: null,
        samples: 0,
        reason:
          reasons[0] ??
          (nodes.length === 0 ? `no ready ${target.gpuType} node with free GPUs` : "infeasible"),
      };
    }
    const round = (x: number) => Math.round(x * 10) / 10;
    return {
      path,
      available: true,
      nodeName: best.option.nodeName,
      locality: best.option.locality,
      meanSeconds: round(best.prediction.meanSeconds),
      p90Seconds: round(best.prediction.p90Seconds),
      samples: best.prediction.samples,
      reason: null,
    };
  });
  return {
    endpoint: { id: row.id, slug: row.slug },
    objective: target.objective,
    paths,
  };
}
