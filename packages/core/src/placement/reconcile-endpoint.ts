import { directSql, Prisma, type DbClient, type SqlRows } from "@thaw/db";
import {
  noteCapacityChange,
  warmPoolMemoryOf,
  type MemoryRow,
} from "../warm-pool/warm-pool-memory.ts";
import {
  COUNTED_REPLICA_STATES,
  CRASH_LOOP_WINDOW_MS,
  decideReconcile,
  reconcileChangesNothing,
  UNDISPATCHED_AFTER_MS,
  type ReconcileDecision,
  type ReconcileReplica,
} from "./decide-reconcile.ts";
import { placeJobHeads } from "./place-job-heads.ts";
import type { PendingReplica } from "./place-replica.ts";
import { replicaReasonSql, replicaReasonText } from "./replica-reason.ts";
import { uuidV7 } from "./uuid-v7.ts";

// Reconcile (ARCHITECTURE.md §3 step 2), level-triggered: desired vs actual, read from Postgres
// every time — a job payload is only an id, and running it twice changes nothing more. The
// decision is core's decideReconcile; this file reads its inputs and writes what it decided.

export interface ReconcileEndpointResult {
  desired: number;
  counted: number;
  created: string[];
  /** Place jobs for the endpoint's pending replicas: one per batch (placeJobHeads). */
  toPlace: string[];
  /**
   * The first of toPlace with what placement would otherwise read of it first (it was
   * pending, of this endpoint and deployment, when this reconcile read or made it).
   */
  firstToPlace?: PendingReplica;
  /** Replicas being drained; the worker stops them on their node, then finishes the stop. */
  toStop: {
    replicaId: string;
    nodeId: string | null;
    action: "stop-on-node" | "release" | "wait";
  }[];
  /** Cold starts placed but never dispatched (a lost dispatch job). */
  toDispatch: string[];
  /** Scaled-down ready replicas left for the warm-pool worker to park or stop. */
  parking: string[];
  /** Set when replacements are held back by the crash-loop backoff. */
  backoff: string | null;
}

export async function reconcileEndpoint({
  db,
  endpointId,
  now = new Date(),
  unlockedFirst = false,
}: {
  db: DbClient;
  endpointId: string;
  now?: Date;
  /**
   * Decide first on an unlocked read, and take the endpoint's lock only when the decision
   * changes something (the sweep's reconciles: most find nothing to do, and each locked one
   * was a transaction, a row lock written to the endpoint's row and four round trips). The read
   * is one statement, one snapshot: a decision that changes nothing there is the one a locked
   * reconcile ordered just before any concurrent change would have made, and that change's
   * own reconcile follows it.
   */
  unlockedFirst?: boolean;
}): Promise<ReconcileEndpointResult> {
  if (unlockedFirst) {
    const read = await readReconcileState(directSql(db).rows, endpointId, now, false);
    if (!read) return nothing();
    const decision = decideReconcile({ ...read, now });
    if (reconcileChangesNothing(decision)) return resultOf(endpointId, decision, []);
  }
  // Direct statements (direct-sql.ts), not Prisma's interactive transaction: reconcile runs
  // once per scale event, and the client's query compiler cost more CPU than the statements
  // (bench:placement's per-event CPU).
  return directSql(db).transaction(async (tx) => {
    const read = await readReconcileState(tx.rows, endpointId, now, true);
    if (!read) return nothing();
    const { endpoint, memory } = read;
    const decision = decideReconcile({ ...read, now });
    if (decision.capacityNote === "surplus")
      await noteCapacityChange(tx.rows, endpoint, "surplus", now, memory);
    for (const drain of decision.drains) {
      await tx.execute(Prisma.sql`
          UPDATE "Replica" SET state = 'draining', "stateVersion" = "stateVersion" + 1,
            "updatedAt" = ${new Date()},
            ${replicaReasonSql({ drainIntent: drain.drainIntent })}
          WHERE id = ${drain.replicaId}::uuid`);
      await tx.execute(Prisma.sql`
          UPDATE "ColdStart" SET status = 'cancelled', "finishedAt" = ${now},
            error = ${replicaReasonText({
              pendingCause: null,
              drainIntent: drain.cancelIntent,
              reasonDetail: {},
            })}
          WHERE "replicaId" = ${drain.replicaId}::uuid
            AND status IN ('scheduled', 'dispatched', 'running')`);
    }

    const created: string[] = [];
    const { deploymentId } = decision;
    if (decision.shortfall > 0 && deploymentId) {
      // One statement however large the step, with one parameter for all the ids: as a
      // Prisma createMany, a scale-up of 500 was 2,500 parameters through its query
      // compiler, and bench:placement's 20 such reconciles held both schedulers' CPU for
      // seconds before the first placement. Ids are v7, so they sort in creation order.
      const ids = Array.from({ length: decision.shortfall }, () => uuidV7());
      // Each remembers the scale-up it was made for (the endpoint's newest): its cold-start
      // trace begins at that request, under that call's trace context.
      await tx.execute(Prisma.sql`
          INSERT INTO "Replica" (id, "orgId", "endpointId", "deploymentId", state, "updatedAt",
            "scaleEventId")
          SELECT id, ${endpoint.orgId}::uuid, ${endpointId}::uuid, ${deploymentId}::uuid,
            'pending', ${new Date()},
            (SELECT s.id FROM "ScaleEvent" s WHERE s."endpointId" = ${endpointId}::uuid
               AND s.desired > s."previousDesired" ORDER BY s."createdAt" DESC LIMIT 1)
          FROM unnest(${ids}::uuid[]) WITH ORDINALITY AS v(id, n) ORDER BY n`);
      created.push(...ids);
    }
    if (decision.capacityNote === "needed")
      await noteCapacityChange(tx.rows, endpoint, "needed", now, memory);
    return resultOf(endpointId, decision, created);
  });
}

/** The result for an endpoint that does not exist (a fresh one each time: callers own it). */
function nothing(): ReconcileEndpointResult {
  return {
    desired: 0,
    counted: 0,
    created: [],
    toPlace: [],
    toStop: [],
    toDispatch: [],
    parking: [],
    backoff: null,
  };
}

/** The worker's part of a decision carried out, with the replicas it created. */
function resultOf(
  endpointId: string,
  decision: ReconcileDecision,
  created: string[],
): ReconcileEndpointResult {
  // Pending now: those read that were not drained, then the ones just made (only ever made
  // for the active deployment).
  const pending = [
    ...decision.pending,
    ...created.map((id) => ({ id, deploymentId: decision.deploymentId! })),
  ];
  const toPlace = placeJobHeads(pending);
  const first = pending.find((p) => p.id === toPlace[0]);
  return {
    desired: decision.desired,
    counted: decision.counted + created.length,
    created,
    toPlace,
    ...(first && {
      firstToPlace: { replicaId: first.id, endpointId, deploymentId: first.deploymentId },
    }),
    parking: decision.parking,
    toStop: decision.toStop,
    toDispatch: decision.toDispatch,
    backoff: decision.backoff,
  };
}

/**
 * Everything reconcile decides from: the endpoint (locked FOR NO KEY UPDATE when `lock`), the
 * replicas that count or drain (with their nodes' states), the endpoint's recent failures (the
 * crash-loop backoff), its lost dispatches and the warm pool's memory of it. Undefined when
 * there is no such endpoint.
 */
async function readReconcileState(rows: SqlRows, endpointId: string, now: Date, lock: boolean) {
  const endpointColumns = Prisma.sql`e.id::text, e."orgId"::text AS "orgId", e."desiredReplicas",
    e."activeDeploymentId"::text AS "activeDeploymentId", e."deletedAt" IS NOT NULL AS deleted`;
  let read: (EndpointRow & ReconcileStateRow) | undefined;
  if (lock) {
    // One reconcile per endpoint at a time, across scheduler processes: the row lock
    // serialises them, so two never both see the same shortfall (and orders them with
    // warm-pool tending and scale requests). NO KEY UPDATE, not UPDATE: placements insert
    // cold starts and replicas whose foreign-key checks take KEY SHARE on this row, and FOR
    // UPDATE made every placement of the endpoint wait for each reconcile and scale request
    // (bench:placement's steady phase: 11 ms per scale request). The state is read in a
    // statement after the lock's: its snapshot then holds what the lock's last holder committed.
    const [endpoint] = await rows<EndpointRow>(Prisma.sql`SELECT ${endpointColumns}
      FROM "Endpoint" e WHERE e.id = ${endpointId}::uuid FOR NO KEY UPDATE`);
    if (!endpoint) return undefined;
    const [state] = await rows<ReconcileStateRow>(
      Prisma.sql`SELECT ${reconcileStateColumns(endpointId, now)}`,
    );
    read = { ...endpoint, ...state! };
  } else {
    // One statement, so the endpoint and its replicas are read in one snapshot.
    [read] = await rows<EndpointRow & ReconcileStateRow>(Prisma.sql`
      SELECT ${endpointColumns}, ${reconcileStateColumns(endpointId, now)}
      FROM "Endpoint" e WHERE e.id = ${endpointId}::uuid`);
    if (!read) return undefined;
  }
  // json_build_object writes a timestamp column as its text, without a zone: it is UTC.
  const utc = (text: string) => new Date(`${text}Z`);
  const { replicas, recentFailures, undispatched, memory, ...endpoint } = read;
  return {
    endpoint,
    replicas: replicas.map((r) => ({
      ...r,
      createdAt: utc(r.createdAt),
      updatedAt: utc(r.updatedAt),
    })),
    recentFailures,
    undispatched,
    memory: warmPoolMemoryOf(memory ?? undefined),
  };
}

/** The select list of reconcile's state (ReconcileStateRow) for one endpoint. */
function reconcileStateColumns(endpointId: string, now: Date) {
  return Prisma.sql`
    COALESCE((SELECT json_agg(json_build_object('id', r.id, 'state', r.state,
        'deploymentId', r."deploymentId", 'nodeId', r."nodeId", 'prewarm', r.prewarm,
        'pendingCause', r."pendingCause", 'drainIntent', r."drainIntent",
        'createdAt', r."createdAt", 'updatedAt', r."updatedAt", 'nodeState', n.state,
        'capturing', EXISTS (SELECT 1 FROM "Snapshot" s
          WHERE s."sourceReplicaId" = r.id AND s.status = 'capturing'))
        ORDER BY r."createdAt")
      FROM "Replica" r LEFT JOIN "Node" n ON n.id = r."nodeId"
      WHERE r."endpointId" = ${endpointId}::uuid
        AND r.state = ANY(${[...COUNTED_REPLICA_STATES, "draining"]}::"ReplicaState"[])),
      '[]'::json) AS replicas,
    (SELECT count(*)::int FROM "Replica"
      WHERE "endpointId" = ${endpointId}::uuid AND state = 'failed'
        AND "updatedAt" > ${new Date(now.getTime() - CRASH_LOOP_WINDOW_MS)}) AS "recentFailures",
    COALESCE((SELECT json_agg(json_build_object('id', c.id, 'replicaId', c."replicaId"))
      FROM "ColdStart" c
      WHERE c."endpointId" = ${endpointId}::uuid AND c.status = 'scheduled'
        AND c."requestedAt" < ${new Date(now.getTime() - UNDISPATCHED_AFTER_MS)}),
      '[]'::json) AS undispatched,
    (SELECT json_build_object('histogram', w.histogram, 'idleSince', w."idleSince",
        'bestNonWarmSeconds', w."bestNonWarmSeconds")
      FROM "EndpointWarmPool" w WHERE w."endpointId" = ${endpointId}::uuid) AS memory`;
}

interface EndpointRow {
  id: string;
  orgId: string;
  desiredReplicas: number;
  activeDeploymentId: string | null;
  deleted: boolean;
}

/** A replica as the state statement gives it: timestamps as json_build_object writes them. */
interface ReplicaRow extends Omit<ReconcileReplica, "createdAt" | "updatedAt"> {
  /** UTC, without a zone. */
  createdAt: string;
  updatedAt: string;
}

interface ReconcileStateRow {
  replicas: ReplicaRow[];
  recentFailures: number;
  undispatched: { id: string; replicaId: string }[];
  memory: MemoryRow | null;
}
