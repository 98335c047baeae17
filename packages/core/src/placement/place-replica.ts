import { directSql, Prisma, type DbClient, type SqlTransaction } from "@thaw/db";
import {
  DEFAULT_EXPLORATION,
  type SchedulingNode,
  type StartOption,
  type StartOptionChoice,
} from "../scheduling/index.ts";
import type { StartPath } from "../vocabulary/index.ts";
import {
  loadDeploymentStartInputs,
  loadPeerSources,
  loadSchedulingNodes,
} from "./load-placement-state.ts";
import { coalesceByTick } from "./coalesce-by-tick.ts";
import { decideBatch, type BatchDecision, type BatchReplica } from "./decide-batch.ts";
import { lockNodesSql } from "./lock-nodes.ts";
import { optionsRecord } from "./options-record.ts";
import {
  replicaReasonData,
  replicaReasonSql,
  replicaReasonText,
  type ReplicaReason,
} from "./replica-reason.ts";
import { uuidV7 } from "./uuid-v7.ts";
import { schedulingDeployment, schedulingEndpoint } from "./scheduling-inputs.ts";

// Place (ARCHITECTURE.md §3 step 3): options node × path, predictions, the choice, then one
// transaction that reserves the GPUs, moves the replica to `placed` and writes the cold
// start with every option considered.
//
// A place job takes its replica and up to PLACEMENT_BATCH other pending replicas of the same
// deployment (rows locked with SKIP LOCKED, so concurrent workers take disjoint batches),
// reads the fleet once and decides for each in turn against the state the earlier decisions
// left — like Nomad's plan for a job's allocations. The chosen nodes are then locked and
// their free GPUs re-read: a node another batch filled meanwhile loses its replica, which
// stays pending for its own job. UNIQUE(nodeId, gpuIndex) stays the last word.

/** A cold start a place job committed: its own replica's or another of its batch's. */
export interface PlacedColdStart {
  replicaId: string;
  coldStartId: string;
  /** The decision, for the scheduler's metrics: which path, what the node held, explored or not. */
  path: StartPath;
  locality: string;
  explored: boolean;
}

/**
 * `placed` lists every cold start the job committed, whatever became of its own replica:
 * the batch's others must be dispatched even when the job's replica lost its node or found
 * none (left undispatched, they would wait for the periodic sweep). `followUps` are the
 * replicas that need a place job now: those of the batch that lost their node to another
 * batch, and — after a batch that placed something — the next pending replica of the
 * deployment that no batch holds, so a scale-up keeps going with one job per batch.
 */
export type PlaceReplicaResult = { placed: PlacedColdStart[]; followUps: string[] } & (
  | { kind: "placed"; coldStartId: string; nodeId: string; path: StartPath; attempt: number }
  | { kind: "unplaceable"; reason: string; orgId: string }
  | { kind: "skipped"; reason: string }
);

/** A replica whose starts failed this many times is given up (reconcile replaces it). */
export const MAX_START_ATTEMPTS = 4;
export const PLACEMENT_BATCH = 32;
const EXPLORATION_WINDOW_MS = 60 * 60_000;

interface BatchReplicaRow {
  id: string;
  orgId: string;
  endpointId: string;
  deploymentId: string;
  prewarm: boolean;
  coldStarts: { nodeId: string | null; path: StartPath; status: string }[];
}

interface BatchContextRow {
  endpointId: string;
  gpuType: string;
  gpuCount: number;
  allowedPaths: StartPath[];
  objective: "mean" | "p90";
  deploymentId: string;
  deploymentEndpointId: string;
  imageDigest: string;
  estargzDigest: string | null;
  modelBytes: bigint;
  imageLayers: unknown;
  engineProfile: unknown;
  readyReplicas: number;
  recentExplorations: number;
  recentDecisions: number;
  replicas: BatchReplicaRow[];
}

/**
 * The replicas' states and deployments, one statement per turn of the event loop
 * (coalesce-by-tick.ts). Not locked: the transaction locks what it places and reads it again.
 */
const replicaState = coalesceByTick<
  string,
  { state: string; endpointId: string; deploymentId: string }
>(async (db, ids) => {
  const rows = await directSql(db).rows<{
    id: string;
    state: string;
    endpointId: string;
    deploymentId: string;
  }>(Prisma.sql`
    SELECT id::text, state::text, "endpointId"::text AS "endpointId",
      "deploymentId"::text AS "deploymentId"
    FROM "Replica" WHERE id = ANY(${ids}::uuid[])`);
  return new Map(rows.map((r) => [r.id, r]));
});

/** A replica its caller just read or made pending, with its endpoint and deployment. */
export interface PendingReplica {
  replicaId: string;
  endpointId: string;
  deploymentId: string;
}

export async function placeReplica({
  db,
  replicaId,
  random = Math.random,
  batch = PLACEMENT_BATCH,
  known,
}: {
  db: DbClient;
  replicaId: string;
  /**
   * What the caller knows of the replica (reconcile, placing the first of what it made
   * pending): the read before the transaction is skipped, a round trip fewer per scale-up.
   * Only a hint: the transaction locks the replica and reads its state again.
   */
  known?: PendingReplica;
  /** Uniform [0, 1) for Thompson exploration; tests seed it. */
  random?: () => number;
  batch?: number;
}): Promise<PlaceReplicaResult> {
  // A place job is a batch of its deployment's pending replicas, its own first. Reconcile
  // enqueues one job per PLACEMENT_BATCH pending replicas (placeJobHeads), so a job whose own
  // replica another batch took places the next pending ones instead: the jobs are
  // interchangeable, and a scale-up of 500 is 16 jobs, not 500 mostly finding nothing to do.
  const seen =
    known?.replicaId === replicaId
      ? { state: "pending", endpointId: known.endpointId, deploymentId: known.deploymentId }
      : await replicaState(db, replicaId);
  if (!seen) return { kind: "skipped", reason: "replica gone", placed: [], followUps: [] };
  return directSql(db).transaction(async (tx) => {
    // One statement locks the batch: the job's own replica (whatever its state, to say why
    // it is skipped), the deployment's oldest other pending ones, and one more, the next that
    // no batch holds, handed to a job if this batch places anything (a scale-up keeps going).
    // A job that will own its replica (pending when looked up) locks one fewer of the others:
    // every replica it locks and does not place waits for the next job or sweep.
    const othersLimit = seen.state === "pending" ? batch : batch + 1;
    const locked = await tx.rows<{ id: string; state: string; own: boolean }>(Prisma.sql`
        WITH own AS (
          SELECT id, state FROM "Replica" WHERE id = ${replicaId}::uuid FOR UPDATE SKIP LOCKED
        ), others AS (
          SELECT id, state, "createdAt" FROM "Replica"
          WHERE "endpointId" = ${seen.endpointId}::uuid
            AND "deploymentId" = ${seen.deploymentId}::uuid
            AND state = 'pending' AND id <> ${replicaId}::uuid
          ORDER BY "createdAt" LIMIT ${othersLimit} FOR UPDATE SKIP LOCKED
        )
        SELECT id::text, state::text, true AS own, NULL::timestamp AS "createdAt" FROM own
        UNION ALL
        SELECT id::text, state::text, false AS own, "createdAt" FROM others
        ORDER BY own DESC, "createdAt"`);
    const own = locked.find((row) => row.own);
    const owns = own?.state === "pending";
    const others = locked.filter((row) => !row.own).map((row) => row.id);
    const batchIds = owns ? [replicaId, ...others.slice(0, batch - 1)] : others.slice(0, batch);
    const next = others[batchIds.length - (owns ? 1 : 0)];
    if (batchIds.length === 0) {
      const reason = own ? `replica is ${own.state}` : "replica being placed by another job";
      return { kind: "skipped", reason, placed: [], followUps: [] };
    }
    const result = await placeLocked(db, tx, seen, batchIds, random, owns);
    if (result.placed.length === 0 || next === undefined) return result;
    return { ...result, followUps: [...result.followUps, next] };
  });
}

/** `owns`: replicaIds[0] is the job's own replica (otherwise the job took another batch). */
async function placeLocked(
  db: DbClient,
  tx: SqlTransaction,
  batchOf: { endpointId: string; deploymentId: string },
  replicaIds: string[],
  random: () => number,
  owns: boolean,
): Promise<PlaceReplicaResult> {
  // One statement for what the batch decides from: the endpoint, its deployment, the counts
  // the choice weighs, and the replicas with their earlier attempts (every replica of a batch
  // is of this endpoint and deployment: the batch was selected so). The recent decisions are
  // counted only as far as the budget check can tell apart: the LIMIT is
  // recentDecisionsWorthCounting(recentExplorations, batch size), computed where the count is.
  const since = new Date(Date.now() - EXPLORATION_WINDOW_MS);
  const [context] = await tx.rows<BatchContextRow>(Prisma.sql`
    WITH context AS (
      SELECT e.id, e."orgId", e."gpuType", e."gpuCount", e."allowedPaths", e.objective,
        d.id AS "deploymentId", d."endpointId" AS "deploymentEndpointId", d."imageDigest",
        d."estargzDigest", d."modelBytes", d."imageLayers", d."engineProfile",
        (SELECT count(*)::int FROM "Replica" p WHERE p."endpointId" = e.id AND p.state = 'ready')
          AS "readyReplicas",
        (SELECT count(*)::int FROM "ColdStart" c WHERE c."orgId" = e."orgId"
          AND c.explored AND c."requestedAt" > ${since}) AS "recentExplorations"
      FROM "Endpoint" e, "Deployment" d
      WHERE e.id = ${batchOf.endpointId}::uuid AND d.id = ${batchOf.deploymentId}::uuid
    )
    SELECT x.id::text AS "endpointId", x."orgId"::text AS "orgId", x."gpuType", x."gpuCount",
      x."allowedPaths"::text[] AS "allowedPaths", x.objective::text AS objective,
      x."deploymentId"::text AS "deploymentId",
      x."deploymentEndpointId"::text AS "deploymentEndpointId", x."imageDigest",
      x."estargzDigest", x."modelBytes", x."imageLayers", x."engineProfile", x."readyReplicas",
      x."recentExplorations",
      (SELECT count(*)::int FROM (
        SELECT 1 FROM "ColdStart" c WHERE c."orgId" = x."orgId" AND c."requestedAt" > ${since}
        LIMIT ceil((x."recentExplorations" + ${replicaIds.length} + 1)
          / ${DEFAULT_EXPLORATION.budgetFraction}::float8)::int + 1
      ) AS counted) AS "recentDecisions",
      (SELECT json_agg(json_build_object('id', r.id, 'orgId', r."orgId",
          'endpointId', r."endpointId", 'deploymentId', r."deploymentId", 'prewarm', r.prewarm,
          'coldStarts', COALESCE((SELECT json_agg(json_build_object('nodeId', c."nodeId",
            'path', c.path, 'status', c.status)) FROM "ColdStart" c WHERE c."replicaId" = r.id),
            '[]'::json)))
        FROM "Replica" r WHERE r.id = ANY(${replicaIds}::uuid[])) AS replicas
    FROM context x`);
  if (!context) throw new Error(`endpoint or deployment of replica ${replicaIds[0]} not found`);
  const replicas = context.replicas;
  const byId = new Map(replicas.map((r) => [r.id, r]));
  const first = byId.get(replicaIds[0]!)!;
  const endpointRow = {
    id: context.endpointId,
    gpuType: context.gpuType,
    gpuCount: context.gpuCount,
    allowedPaths: context.allowedPaths,
    objective: context.objective,
  };
  const deploymentRow = {
    id: context.deploymentId,
    endpointId: context.deploymentEndpointId,
    imageDigest: context.imageDigest,
    estargzDigest: context.estargzDigest,
    modelBytes: context.modelBytes,
    imageLayers: context.imageLayers,
    engineProfile: context.engineProfile,
  };
  const endpoint = schedulingEndpoint(endpointRow);
  const deployment = schedulingDeployment(deploymentRow);

  // Replicas out of attempts are given up here; reconcile decides about replacements.
  const exhausted = replicas.filter((r) => r.coldStarts.length >= MAX_START_ATTEMPTS);
  if (exhausted.length > 0)
    await tx.execute(Prisma.sql`
      UPDATE "Replica" SET state = 'failed', "stateVersion" = "stateVersion" + 1,
        ${replicaReasonSql({ pendingCause: "start_attempts_exhausted", attempts: MAX_START_ATTEMPTS })},
        "updatedAt" = now()
      WHERE id = ANY(${exhausted.map((r) => r.id)}::uuid[])`);
  const toPlace = replicaIds.filter((id) => !exhausted.some((r) => r.id === id));
  if (toPlace.length === 0)
    return { kind: "skipped", reason: "too many failed starts", placed: [], followUps: [] };

  const [nodes, { snapshots, history, kernelCaches }, peerSources] = await Promise.all([
    loadSchedulingNodes(tx.rows, first.orgId, endpoint.gpuType, {
      deploymentId: deployment.id,
      imageDigests: [deployment.imageDigest, deployment.estargzDigest].filter(
        (d): d is string => d !== null,
      ),
      gpus: endpoint.gpuCount,
      sample: toPlace.length,
    }),
    // Plain reads, outside the transaction: at read committed they see the same rows.
    loadDeploymentStartInputs(directSql(db).rows, first.orgId, deployment),
    // Only when a path that copies from a peer (peer, or a restore's weights) is allowed and
    // something of the deployment serves already.
    (endpoint.allowedPaths.includes("peer") || endpoint.allowedPaths.includes("restore")) &&
    context.readyReplicas > 0
      ? loadPeerSources(directSql(db).rows, first.orgId, deployment.id)
      : [],
  ]);
  const readyReplicas = context.readyReplicas;
  const nodesById = new Map(nodes.map((n) => [n.id, n]));
  const batchDecisions = decideBatch({
    endpoint,
    deployment: kernelCaches.length > 0 ? { ...deployment, kernelCaches } : deployment,
    nodes,
    snapshots,
    peerSources,
    history,
    replicas: toPlace.map((id): BatchReplica => {
      const replica = byId.get(id)!;
      const attempt = replica.coldStarts.length + 1;
      return {
        replicaId: id,
        attempt,
        trigger: replica.prewarm
          ? "prewarm"
          : attempt > 1
            ? "replacement"
            : readyReplicas === 0
              ? "scale_from_zero"
              : "scale_up",
        // A failed attempt's node × path is not tried again for this replica.
        failed: new Set(
          replica.coldStarts
            .filter((c) => c.status === "failed" || c.status === "cancelled")
            .map((c) => `${c.nodeId}|${c.path}`),
        ),
      };
    }),
    recentDecisions: context.recentDecisions,
    recentExplorations: context.recentExplorations,
    random,
  });

  const decided: BatchDecision[] = [];
  const undecided: { replicaId: string; reason: ReplicaReason }[] = [];
  for (const decision of batchDecisions) {
    if (decision.choice.chosen) decided.push(decision);
    else
      undecided.push({
        replicaId: decision.replicaId,
        reason: waitingForCapacity(decision.choice, endpoint.gpuType, endpoint.gpuCount),
      });
  }
  const written = undecided.map((u) => replicaReasonData(u.reason));
  // The last one's sentence, for the job's log.
  const lastReason = written.length > 0 ? (replicaReasonText(written.at(-1)!) ?? "") : "";
  if (undecided.length > 0)
    await tx.execute(Prisma.sql`
      UPDATE "Replica" AS r SET "pendingCause" = v.cause, "drainIntent" = NULL,
        "reasonDetail" = v.detail, "updatedAt" = now()
      FROM unnest(${undecided.map((u) => u.replicaId)}::uuid[],
        ${written.map((w) => w.pendingCause)}::"ReplicaPendingCause"[],
        ${written.map((w) => JSON.stringify(w.reasonDetail))}::jsonb[]) AS v(replica_id, cause, detail)
      WHERE r.id = v.replica_id`);

  const placed = await commitDecisions(tx, decided, byId, nodesById, endpoint.objective);
  // Decided, but their node filled up, was retired or lost its idle replica meanwhile (another
  // batch, a drain, the warm pool): placed again at once.
  const followUps = decided
    .map((d) => d.replicaId)
    .filter((id) => !placed.some((p) => p.replicaId === id));
  if (!owns)
    return {
      kind: "skipped",
      reason: `replica taken by another batch; placed ${placed.length} more of its deployment`,
      placed,
      followUps,
    };
  const mine = placed.find((p) => p.replicaId === replicaIds[0]);
  if (!mine) {
    if (followUps.includes(replicaIds[0]!))
      return {
        kind: "skipped",
        reason: "its node or idle replica was taken meanwhile",
        placed,
        followUps,
      };
    return { kind: "unplaceable", reason: lastReason, orgId: first.orgId, placed, followUps };
  }
  return { kind: "placed", ...mine, placed, followUps };
}

async function commitDecisions(
  tx: SqlTransaction,
  decided: BatchDecision[],
  replicas: Map<string, { id: string; orgId: string; endpointId: string; deploymentId: string }>,
  nodes: Map<string, SchedulingNode>,
  objective: "mean" | "p90",
) {
  if (decided.length === 0) return [];
  // Lock the chosen nodes (in id order: no deadlock between batches), then re-read their
  // reservations: what another batch took since we read is not ours to give. Advisory locks,
  // not row locks: a node's heartbeat updates its row and must never wait for a placement.
  const nodeIds = [...new Set(decided.map((d) => d.choice.chosen!.option.nodeId))].sort();
  await tx.rows(lockNodesSql(nodeIds));
  const handsOver = (option: StartOption) =>
    option.path === "warm" && option.warmReplicaId !== undefined;
  // A node retired (draining) or lost since the state was read takes nothing more; the
  // retirement took the same lock, so a later read sees it. One read: each node's state and
  // the GPUs reserved on it now — needed only by a decision that takes GPUs (a wake or a
  // start); a handover's own statement checks its node, so a batch of handovers skips it.
  const takesGpus = decided.filter((d) => !handsOver(d.choice.chosen!.option));
  const takenNodeIds = [...new Set(takesGpus.map((d) => d.choice.chosen!.option.nodeId))];
  const current =
    takenNodeIds.length === 0
      ? []
      : await tx.rows<{ id: string; ready: boolean; used: number[] }>(Prisma.sql`
    SELECT n.id::text, n.state = 'ready' AS ready,
      ARRAY(SELECT g."gpuIndex" FROM "GpuReservation" g WHERE g."nodeId" = n.id) AS used
    FROM "Node" n WHERE n.id = ANY(${takenNodeIds}::uuid[])`);
  const stillReady = new Set(current.filter((n) => n.ready).map((n) => n.id));
  const used = new Map<string, Set<number>>(current.map((n) => [n.id, new Set(n.used)]));

  const reservations: { nodeId: string; gpuIndex: number; replicaId: string }[] = [];
  /** Hand-overs (the replica → the idle replica whose GPUs it takes), decided in the write. */
  const handovers: { replicaId: string; warmReplicaId: string; nodeId: string }[] = [];
  const kept: BatchDecision[] = [];
  for (const decision of decided) {
    const option = decision.choice.chosen!.option;
    if (handsOver(option)) {
      handovers.push({
        replicaId: decision.replicaId,
        warmReplicaId: option.warmReplicaId!,
        nodeId: option.nodeId,
      });
      kept.push(decision);
      continue;
    }
    if (!stillReady.has(option.nodeId)) continue;
    if (option.path === "wake" && option.sleepingReplica) {
      // Wake: the sleeping engine's GPUs — the only ones it can wake on — become this
      // replica's, if nobody took them since; the sleeping row is retired.
      // One statement: retired only while still asleep and none of its GPUs taken.
      const inUse = used.get(option.nodeId) ?? new Set<number>();
      const [retired] = await tx.rows<{ sleepingGpus: number[] }>(Prisma.sql`
        UPDATE "Replica" SET state = 'stopped', "stateVersion" = "stateVersion" + 1,
          "stoppedAt" = ${new Date()}, "updatedAt" = ${new Date()}
        WHERE id = ${option.sleepingReplica.replicaId}::uuid AND state = 'sleeping'
          AND cardinality("sleepingGpus") > 0 AND NOT ("sleepingGpus" && ${[...inUse]}::int[])
        RETURNING "sleepingGpus"`);
      if (!retired) continue;
      for (const gpuIndex of retired.sleepingGpus) {
        inUse.add(gpuIndex);
        reservations.push({ nodeId: option.nodeId, gpuIndex, replicaId: decision.replicaId });
      }
      used.set(option.nodeId, inUse);
      kept.push(decision);
      continue;
    }
    const node = nodes.get(option.nodeId)!;
    const inUse = used.get(option.nodeId) ?? new Set<number>();
    const free = Array.from({ length: node.gpuCount }, (_, i) => i).filter((i) => !inUse.has(i));
    if (free.length < option.gpusToReserve) continue;
    for (const gpuIndex of free.slice(0, option.gpusToReserve)) {
      inUse.add(gpuIndex);
      reservations.push({ nodeId: option.nodeId, gpuIndex, replicaId: decision.replicaId });
    }
    used.set(option.nodeId, inUse);
    kept.push(decision);
  }
  if (kept.length === 0) return [];
  // One statement for the batch's writes — the hand-overs, the reservations (UNIQUE(nodeId,
  // gpuIndex) has the last word: a violation fails the transaction and the job is retried),
  // the replicas to `placed`, and the cold starts with every option considered: every round
  // trip counts at hundreds of placements a second, and so does building queries row by row.
  // A hand-over happens only if its idle replica is still warm and its node still ready
  // (read after the lock: this statement began after it was taken); one that did not is
  // neither placed nor recorded, and its replica is placed again (a follow-up).
  const coldStarts = kept.map((decision) => {
    const { option, prediction } = decision.choice.chosen!;
    const replica = replicas.get(decision.replicaId)!;
    return {
      id: uuidV7(),
      orgId: replica.orgId,
      endpointId: replica.endpointId,
      deploymentId: replica.deploymentId,
      replicaId: replica.id,
      nodeId: option.nodeId,
      attempt: decision.attempt,
      trigger: decision.trigger,
      path: option.path,
      locality: option.locality,
      predictedSeconds: objective === "p90" ? prediction.p90Seconds : prediction.meanSeconds,
      // The prediction whatever the objective: what the dashboard shows and calibrates.
      predictedMeanSeconds: prediction.meanSeconds,
      predictedP10Seconds: prediction.p10Seconds,
      predictedP90Seconds: prediction.p90Seconds,
      options: optionsRecord(decision.choice),
      explanation: decision.choice.explanation,
      explored: decision.choice.explored,
      handsOver: handsOver(option),
    };
  });
  const now = new Date();
  const written = await tx.rows<{ id: string }>(Prisma.sql`
    WITH handed AS (
      UPDATE "Replica" AS w SET state = 'stopped', "stateVersion" = w."stateVersion" + 1,
        "stoppedAt" = ${now}, "updatedAt" = ${now}
      FROM unnest(${handovers.map((h) => h.warmReplicaId)}::uuid[],
        ${handovers.map((h) => h.replicaId)}::uuid[], ${handovers.map((h) => h.nodeId)}::uuid[])
        AS h(warm_id, replica_id, node_id)
      WHERE w.id = h.warm_id AND w.state = 'warm'
        AND EXISTS (SELECT 1 FROM "Node" n WHERE n.id = h.node_id AND n.state = 'ready')
      RETURNING w.id AS warm_id, h.replica_id
    ), moved_gpus AS (
      UPDATE "GpuReservation" AS g SET "replicaId" = handed.replica_id
      FROM handed WHERE g."replicaId" = handed.warm_id
    ), reserved AS (
      INSERT INTO "GpuReservation" (id, "nodeId", "gpuIndex", "replicaId")
      SELECT * FROM unnest(${reservations.map(() => uuidV7())}::uuid[],
        ${reservations.map((r) => r.nodeId)}::uuid[], ${reservations.map((r) => r.gpuIndex)}::int[],
        ${reservations.map((r) => r.replicaId)}::uuid[])
    ), to_place AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(coldStarts)}::jsonb) AS x(id uuid,
        "orgId" uuid, "endpointId" uuid, "deploymentId" uuid, "replicaId" uuid, "nodeId" uuid,
        attempt int, trigger text, path text, locality text, "predictedSeconds" float8,
        "predictedMeanSeconds" float8, "predictedP10Seconds" float8, "predictedP90Seconds" float8,
        options jsonb, explanation text, explored boolean, "handsOver" boolean)
      WHERE NOT x."handsOver" OR x."replicaId" IN (SELECT replica_id FROM handed)
    ), moved AS (
      UPDATE "Replica" AS r
      SET state = 'placed', "nodeId" = x."nodeId", "stateVersion" = r."stateVersion" + 1,
          "pendingCause" = NULL, "drainIntent" = NULL, "reasonDetail" = '{}', "updatedAt" = now()
      FROM to_place x
      WHERE r.id = x."replicaId"
    )
    INSERT INTO "ColdStart" (id, "orgId", "endpointId", "deploymentId", "replicaId", "nodeId",
      attempt, trigger, path, locality, "predictedSeconds", "predictedMeanSeconds",
      "predictedP10Seconds", "predictedP90Seconds", options, explanation, explored)
    SELECT x.id, x."orgId", x."endpointId", x."deploymentId", x."replicaId", x."nodeId",
      x.attempt, x.trigger::"ColdStartTrigger", x.path::"StartPath", x.locality,
      x."predictedSeconds", x."predictedMeanSeconds", x."predictedP10Seconds",
      x."predictedP90Seconds", x.options, x.explanation, x.explored
    FROM to_place x
    RETURNING id::text`);
  const placedIds = new Set(written.map((w) => w.id));
  return coldStarts
    .filter((c) => placedIds.has(c.id))
    .map((c) => ({
      replicaId: c.replicaId,
      coldStartId: c.id,
      nodeId: c.nodeId,
      path: c.path,
      locality: c.locality,
      explored: c.explored,
      attempt: c.attempt,
    }));
}

/** Why placement found no room for a replica: too few free GPUs, or no feasible option at all. */
function waitingForCapacity(
  choice: StartOptionChoice,
  gpuType: string,
  gpus: number,
): ReplicaReason {
  if (choice.infeasible.length === 0)
    return { pendingCause: "waiting_for_capacity", gpus, gpuType };
  const reasons = new Map<string, number>();
  for (const entry of choice.infeasible)
    reasons.set(entry.reason, (reasons.get(entry.reason) ?? 0) + 1);
  const top = [...reasons.entries()].sort((a, b) => b[1] - a[1]).slice(0, 3);
  return {
    pendingCause: "waiting_for_capacity",
    infeasible: top.map(([reason, count]) => ({ reason, count })),
  };
}
