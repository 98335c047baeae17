import { directSql, Prisma, type DbClient } from "@thaw/db";
import {
  type KernelCacheInstruction,
  type NodeRuntime,
  type StartPath,
  StartReplicaRequest,
  type StartReplicaRequestInput,
} from "@thaw/protocol";
import { claimKernelCacheCapture } from "../kernel-caches/claim-kernel-cache-capture.ts";
import { protocolRefusal } from "../fleet/agent-address.ts";
import { peerMountsEstargz, type ScenarioPeer } from "../cold-start-model/index.ts";
import { scenarioPeerFrom } from "../scheduling/enumerate-start-options.ts";
import { NODE_HOST_COLUMNS_SELECT, nodeScenarioHost } from "../scheduling/node-scenario-host.ts";
import { engineWeightReload } from "../sleeping/engine-sleep-calls.ts";
import { checkpointByDigest } from "../snapshots/checkpoint-ref.ts";
import { coalesceByTick } from "./coalesce-by-tick.ts";
import { schedulingDeployment } from "./scheduling-inputs.ts";

// Dispatch (ARCHITECTURE.md §3 step 4): what the agent is told to do for one cold start. The
// request is assembled from Postgres and checked against the protocol's schema here; the
// worker sends it, signed, to the node's agent.

/** Where the engine answers, until deployments carry their own probe settings. */
export const DEFAULT_READINESS = { port: 8000, path: "/health", timeoutSeconds: 1_800 } as const;

export type DispatchPlan =
  | {
      kind: "send";
      /** The start's org: whose stored registry credentials the worker opens for the pull. */
      orgId: string;
      nodeId: string;
      agentUrl: string;
      /** The certificate the node pinned at join, read with the start (null: none pinned). */
      agentCertSha256: string | null;
      runtime: NodeRuntime;
      request: StartReplicaRequest;
    }
  | { kind: "skip"; reason: string }
  | { kind: "fail"; reason: string }
  /**
   * The request fails the protocol's schema (say, an image reference no agent takes): it can
   * never be sent, to this node or another. `reason` is the tenant's (protocolRefusal).
   */
  | { kind: "refuse"; reason: string; issues: StartReplicaRequestIssue[] };

type StartReplicaRequestIssue = { path: PropertyKey[]; message: string };

interface DispatchRow {
  id: string;
  orgId: string;
  status: string;
  replicaId: string;
  path: StartPath;
  replicaState: string;
  gpus: number[];
  chosen: {
    nodeId: string;
    path: string;
    snapshotId?: string;
    stageWeights?: boolean;
    warmReplicaId?: string;
    sleepingReplicaId?: string;
    peerSourceReplicaId?: string;
  } | null;
  nodeId: string | null;
  nodeRdmaGbps: number | null;
  nodeGpuModel: string | null;
  nodeDriverVersion: string | null;
  /** The deployment's kernel cache for the node's GPU and driver, if one is stored or claimed. */
  kernelCache: {
    id: string;
    status: "capturing" | "ready";
    uri: string;
    digest: string | null;
    bytes: string;
  } | null;
  nodeName: string | null;
  nodeState: string | null;
  agentUrl: string | null;
  agentCertSha256: string | null;
  runtime: NodeRuntime | null;
  deploymentId: string;
  endpointId: string;
  imageRef: string;
  imageDigest: string;
  estargzImageRef: string | null;
  estargzDigest: string | null;
  modelBytes: bigint;
  imageLayers: unknown;
  engineProfile: unknown;
  engine: string;
}

/**
 * One statement for the dispatches of one turn of the event loop (coalesce-by-tick.ts); the
 * chosen option is picked out of the stored options in SQL rather than shipped whole.
 */
const readDispatchRow = coalesceByTick<string, DispatchRow>(async (db, coldStartIds) => {
  const rows = await directSql(db).rows<DispatchRow>(Prisma.sql`
    SELECT c.id::text, c."orgId"::text AS "orgId", c.status::text, c."replicaId"::text AS "replicaId", c.path::text,
      r.state::text AS "replicaState",
      ARRAY(SELECT g."gpuIndex" FROM "GpuReservation" g WHERE g."replicaId" = c."replicaId"
        ORDER BY g."gpuIndex") AS gpus,
      (SELECT o FROM jsonb_array_elements(
          CASE WHEN jsonb_typeof(c.options->'feasible') = 'array' THEN c.options->'feasible'
          ELSE '[]'::jsonb END) AS o
        WHERE o->>'chosen' = 'true' LIMIT 1) AS chosen,
      n.id::text AS "nodeId", n.name AS "nodeName", n.state::text AS "nodeState",
      n."rdmaGbps" AS "nodeRdmaGbps", n."gpuModel" AS "nodeGpuModel",
      n."driverVersion" AS "nodeDriverVersion",
      n."agentUrl", n."agentCertSha256", n.runtime::text AS runtime,
      d.id::text AS "deploymentId", d."endpointId"::text AS "endpointId", d."imageRef",
      d."imageDigest", d."estargzImageRef", d."estargzDigest", d."modelBytes", d."imageLayers",
      d."engineProfile", d.engine,
      (SELECT jsonb_build_object('id', k.id, 'status', k.status, 'uri', k.uri,
          'digest', k.digest, 'bytes', k.bytes::text)
        FROM "KernelCache" k
        WHERE k."deploymentId" = c."deploymentId" AND k."orgId" = c."orgId"
          AND k."gpuModel" = n."gpuModel" AND k."driverVersion" = n."driverVersion")
        AS "kernelCache"
    FROM "ColdStart" c
    JOIN "Replica" r ON r.id = c."replicaId"
    JOIN "Deployment" d ON d.id = c."deploymentId"
    LEFT JOIN "Node" n ON n.id = c."nodeId"
    WHERE c.id = ANY(${coldStartIds}::uuid[])`);
  return new Map(rows.map((r) => [r.id, r]));
});

/** Whether a peer start on this node mounts the eStargz variant: the model's choice. */
async function peerLazyImageHere(
  db: DbClient,
  nodeId: string,
  deployment: Parameters<typeof schedulingDeployment>[0],
  peer: ScenarioPeer,
): Promise<boolean> {
  const node = await db.node.findUnique({
    where: { id: nodeId },
    select: NODE_HOST_COLUMNS_SELECT,
  });
  if (!node) return false;
  const modelled = schedulingDeployment(deployment);
  return peerMountsEstargz({
    host: nodeScenarioHost(node),
    image: {
      format: "estargz",
      layers: [...modelled.imageLayers],
      readFraction: modelled.imageReadFraction,
    },
    engine: modelled.engine,
    path: "peer",
    peer,
  });
}

/** The serving replica a start chose to copy from, if it still serves, with its host. */
async function servingPeerSource(db: DbClient, orgId: string, replicaId: string | undefined) {
  const source = replicaId
    ? await db.replica.findFirst({
        where: { id: replicaId, orgId, state: "ready" },
        select: {
          id: true,
          node: {
            select: { name: true, state: true, peerTransfer: true, ...NODE_HOST_COLUMNS_SELECT },
          },
        },
      })
    : null;
  if (!source?.node || source.node.state !== "ready" || !source.node.peerTransfer) return null;
  return { id: source.id, node: source.node };
}

/**
 * A pull or lazy start's kernel cache, read with the start (readDispatchRow): the one stored for
 * the node's GPU and driver, fetched by its digest (placement priced it; one stored since
 * placement is fetched all the same); else, when none is stored, this start claims the
 * capture (claimKernelCacheCapture). Without a store, no capture.
 */
async function kernelCacheInstruction(
  db: DbClient,
  row: DispatchRow,
  store: string | undefined,
): Promise<KernelCacheInstruction | undefined> {
  if (row.path !== "pull" && row.path !== "lazy") return undefined;
  const cache = row.kernelCache;
  if (cache?.status === "ready" && cache.digest)
    return {
      fetch: {
        kernelCacheId: cache.id,
        ref: checkpointByDigest(cache.uri, cache.digest),
        bytes: Number(cache.bytes),
      },
    };
  if (!store || !row.nodeId || !row.nodeGpuModel || !row.nodeDriverVersion) return undefined;
  const claim = await claimKernelCacheCapture({
    db,
    store,
    orgId: row.orgId,
    deploymentId: row.deploymentId,
    gpuModel: row.nodeGpuModel,
    driverVersion: row.nodeDriverVersion,
    coldStartId: row.id,
    nodeId: row.nodeId,
  });
  return claim ? { capture: { kernelCacheId: claim.kernelCacheId, ref: claim.ref } } : undefined;
}

export async function prepareDispatch({
  db,
  coldStartId,
  kernelCacheStore,
}: {
  db: DbClient;
  coldStartId: string;
  /** THAW_SNAPSHOT_REGISTRY: where kernel caches are kept (absent: none are captured). */
  kernelCacheStore?: string;
}): Promise<DispatchPlan> {
  const row = await readDispatchRow(db, coldStartId);
  if (!row) return { kind: "skip", reason: "cold start no longer exists" };
  if (row.status !== "scheduled") return { kind: "skip", reason: `cold start is ${row.status}` };
  if (row.replicaState !== "placed")
    return { kind: "skip", reason: `replica is ${row.replicaState}` };
  // No runtime only when no node is joined: a Node row always has one.
  if (!row.nodeId || !row.runtime || row.nodeState !== "ready")
    return { kind: "fail", reason: `node is ${row.nodeState ?? "gone"}` };
  if (!row.agentUrl) return { kind: "fail", reason: `node ${row.nodeName} has no agent URL` };

  const chosen = row.chosen ?? undefined;
  const deployment = {
    id: row.deploymentId,
    endpointId: row.endpointId,
    imageDigest: row.imageDigest,
    estargzDigest: row.estargzDigest,
    modelBytes: row.modelBytes,
    imageLayers: row.imageLayers,
    engineProfile: row.engineProfile,
  };
  const body: StartReplicaRequestInput["deployment"] = {
    deploymentId: row.deploymentId,
    imageRef: row.imageRef,
    imageDigest: row.imageDigest,
    ...(row.estargzImageRef ? { estargzImageRef: row.estargzImageRef } : {}),
    ...(row.estargzDigest ? { estargzImageDigest: row.estargzDigest } : {}),
  };
  let peerScenario: ReturnType<typeof scenarioPeerFrom> | undefined;
  const request: StartReplicaRequestInput = {
    replicaId: row.replicaId,
    coldStartId: row.id,
    path: row.path,
    gpus: row.gpus,
    readiness: DEFAULT_READINESS,
    deployment: body,
  };
  if (row.path === "warm") {
    if (!chosen?.warmReplicaId) return { kind: "fail", reason: "no warm replica recorded" };
    request.warmReplicaId = chosen.warmReplicaId;
  }
  if (row.path === "wake") {
    if (!chosen?.sleepingReplicaId) return { kind: "fail", reason: "no sleeping replica recorded" };
    request.sleepingReplicaId = chosen.sleepingReplicaId;
  }
  if (row.path === "peer" || (row.path === "restore" && chosen?.peerSourceReplicaId)) {
    // The source must still serve: a replica scaled down or gone since placement sends nothing.
    // A peer start then fails (placement takes the next option); a restore reads its weights
    // from the node's own files instead.
    const source = await servingPeerSource(db, row.orgId, chosen?.peerSourceReplicaId);
    if (!source && row.path === "peer")
      return { kind: "fail", reason: "the chosen peer source is no longer serving" };
    if (source) {
      peerScenario = scenarioPeerFrom(
        { host: nodeScenarioHost(source.node), transfersInFlight: 0 },
        Math.max(1, row.gpus.length),
      );
      request.peerSource = {
        replicaId: source.id,
        nodeName: source.node.name,
        rdma: (row.nodeRdmaGbps ?? 0) > 0 && source.node.rdmaGbps > 0,
        // The eStargz variant or the plain image, whichever the model finds faster here.
        lazyImage:
          row.path === "peer" &&
          row.estargzImageRef !== null &&
          (await peerLazyImageHere(db, row.nodeId, deployment, peerScenario)),
      };
    }
  }
  const kernelCache = await kernelCacheInstruction(db, row, kernelCacheStore);
  if (kernelCache) request.kernelCache = kernelCache;
  if (row.path === "restore") {
    const snapshot = chosen?.snapshotId
      ? await db.snapshot.findUnique({ where: { id: chosen.snapshotId } })
      : null;
    if (!snapshot || snapshot.status !== "ready")
      return { kind: "fail", reason: "the chosen snapshot is no longer ready" };
    if (!snapshot.digest)
      return { kind: "fail", reason: "the chosen snapshot has no recorded digest" };
    const sleepLevel = snapshot.sleepLevel >= 2 ? 2 : 1;
    // A level-2 image woke without weights: the engine reads them again (vLLM's
    // reload_weights), the same call a level-2 wake of a sleeping engine makes.
    const reload = sleepLevel === 2 ? engineWeightReload(row.engine) : null;
    body.snapshot = {
      snapshotId: snapshot.id,
      // By the digest its capture recorded: a tag in the store could have been moved since.
      checkpointRef: checkpointByDigest(snapshot.uri, snapshot.digest),
      sleepLevel,
      ...(reload ? { reloadWeights: reload } : {}),
      // Weights from a peer are never staged from local files.
      ...(chosen?.stageWeights && !request.peerSource ? { stageWeights: true } : {}),
    };
  }
  if (row.runtime === "sim") {
    // A simulated host models the start from the deployment's own figures.
    const modelled = schedulingDeployment(deployment);
    const { warmCaches: _warm, ...engine } = modelled.engine;
    body.simulation = {
      layers: [...modelled.imageLayers],
      readFraction: modelled.imageReadFraction,
      engine,
      ...(peerScenario ? { peer: peerScenario } : {}),
    };
  }
  // What the control plane stored can still fail the protocol (an image reference accepted
  // before the grammar narrowed): such a start fails at once, it is never sent.
  const parsed = StartReplicaRequest.safeParse(request);
  if (!parsed.success)
    return {
      kind: "refuse",
      reason: protocolRefusal(parsed.error.issues[0]),
      issues: parsed.error.issues,
    };
  return {
    kind: "send",
    orgId: row.orgId,
    nodeId: row.nodeId,
    agentUrl: row.agentUrl,
    agentCertSha256: row.agentCertSha256,
    runtime: row.runtime,
    request: parsed.data,
  };
}
