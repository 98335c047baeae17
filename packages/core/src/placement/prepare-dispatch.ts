import type { DbClient } from "@thaw/db";
import { chosenOptionOf } from "./options-record.ts";
import { schedulingDeployment } from "./scheduling-inputs.ts";

// Dispatch (DESIGN.md §3 step 4): what the agent is told to do for one cold start. The
// request is assembled from Postgres; the worker validates it with the protocol's schema
// and sends it with the node's credential.

/** Where the engine answers, until deployments carry their own probe settings. */
export const DEFAULT_READINESS = { port: 8000, path: "/health", timeoutSeconds: 1_800 } as const;

export type DispatchPlan =
  | {
      kind: "send";
      nodeId: string;
      agentUrl: string;
      runtime: "containerd" | "sim";
      /** The StartReplicaRequest body (validated by the caller). */
      request: Record<string, unknown>;
    }
  | { kind: "skip"; reason: string }
  | { kind: "fail"; reason: string };

export async function prepareDispatch({
  db,
  coldStartId,
}: {
  db: DbClient;
  coldStartId: string;
}): Promise<DispatchPlan> {
  const coldStart = await db.coldStart.findUnique({
    where: { id: coldStartId },
    include: {
      replica: { include: { reservations: { select: { gpuIndex: true } } } },
      deployment: true,
      node: true,
    },
  });
  if (!coldStart) return { kind: "skip", reason: "cold start no longer exists" };
  if (coldStart.status !== "scheduled")
    return { kind: "skip", reason: `cold start is ${coldStart.status}` };
  if (coldStart.replica.state !== "placed")
    return { kind: "skip", reason: `replica is ${coldStart.replica.state}` };
  const node = coldStart.node;
  if (!node || node.state !== "ready")
    return { kind: "fail", reason: `node is ${node?.state ?? "gone"}` };
  if (!node.agentUrl) return { kind: "fail", reason: `node ${node.name} has no agent URL` };

  const chosen = chosenOptionOf(coldStart.options);
  const deployment = coldStart.deployment;
  const request: Record<string, unknown> = {
    replicaId: coldStart.replicaId,
    coldStartId: coldStart.id,
    path: coldStart.path,
    gpus: coldStart.replica.reservations.map((r) => r.gpuIndex).sort((a, b) => a - b),
    readiness: DEFAULT_READINESS,
    deployment: {
      deploymentId: deployment.id,
      imageRef: deployment.imageRef,
      imageDigest: deployment.imageDigest,
      ...(deployment.estargzImageRef ? { estargzImageRef: deployment.estargzImageRef } : {}),
      ...(deployment.estargzDigest ? { estargzImageDigest: deployment.estargzDigest } : {}),
    },
  };
  const body = request.deployment as Record<string, unknown>;
  if (coldStart.path === "warm") {
    if (!chosen?.warmReplicaId) return { kind: "fail", reason: "no warm replica recorded" };
    request.warmReplicaId = chosen.warmReplicaId;
  }
  if (coldStart.path === "restore") {
    const snapshot = chosen?.snapshotId
      ? await db.snapshot.findUnique({ where: { id: chosen.snapshotId } })
      : null;
    if (!snapshot || snapshot.status !== "ready")
      return { kind: "fail", reason: "the chosen snapshot is no longer ready" };
    body.snapshot = {
      snapshotId: snapshot.id,
      checkpointRef: snapshot.uri,
      sleepLevel: snapshot.sleepLevel >= 2 ? 2 : 1,
    };
  }
  if (node.runtime === "sim") {
    // A simulated host models the start from the deployment's own figures.
    const modelled = schedulingDeployment(deployment);
    const { warmCaches: _warm, ...engine } = modelled.engine;
    body.simulation = {
      layers: modelled.imageLayers,
      readFraction: modelled.imageReadFraction,
      engine,
    };
  }
  return { kind: "send", nodeId: node.id, agentUrl: node.agentUrl, runtime: node.runtime, request };
}
