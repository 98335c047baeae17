import { directSql, Prisma, type DbClient } from "@thaw/db";
import type { ReplicaDrainIntent, ReplicaPendingCause, ReplicaState } from "../vocabulary/index.ts";
import {
  noteCapacityChange,
  warmPoolMemoryOf,
  type MemoryRow,
} from "../warm-pool/warm-pool-memory.ts";
import { isWaitingForCapacity, outdatedReplicasToKeep } from "./outdated-replicas-to-keep.ts";
import { placeJobHeads } from "./place-job-heads.ts";
import { replicaReasonSql, replicaReasonText } from "./replica-reason.ts";
import { uuidV7 } from "./uuid-v7.ts";

// Reconcile (ARCHITECTURE.md §3 step 2), level-triggered: desired vs actual, read from Postgres
// every time — a job payload is only an id, and running it twice changes nothing more.

/** States that count towards the desired number (serving, or on their way to it). */
export const COUNTED_REPLICA_STATES: readonly ReplicaState[] = [
  "pending",
  "placed",
  "starting",
  "ready",
];
/** Scale-down order: what serves nobody yet goes first, then the newest ready replica. */
const DRAIN_ORDER: Record<string, number> = { pending: 0, placed: 1, starting: 2, ready: 3 };
/**
 * Crash-loop backoff: after this many replicas of an endpoint failed (each after all its
 * start attempts) within the window, reconcile stops creating replacements until the window
 * has passed — a broken image must not turn into an unbounded stream of replicas.
 */
export const CRASH_LOOP_FAILURES = 3;
export const CRASH_LOOP_WINDOW_MS = 5 * 60_000;
/** A cold start placed but not dispatched for this long lost its dispatch job. */
export const UNDISPATCHED_AFTER_MS = 15_000;
/** A drained replica left for the warm-pool worker is stopped by reconcile after this long. */
export const PARKING_GRACE_MS = 60_000;

export interface ReconcileEndpointResult {
  desired: number;
  counted: number;
  created: string[];
  /** Place jobs for the endpoint's pending replicas: one per batch (placeJobHeads). */
  toPlace: string[];
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
}: {
  db: DbClient;
  endpointId: string;
  now?: Date;
}): Promise<ReconcileEndpointResult> {
  // Direct statements (direct-sql.ts), not Prisma's interactive transaction: reconcile runs
  // once per scale event, and the client's query compiler cost more CPU than the statements
  // (bench:placement's per-event CPU).
  return directSql(db).transaction(async (tx) => {
    // One reconcile per endpoint at a time, across scheduler processes: the row lock
    // serialises them, so two never both see the same shortfall (and orders them with
    // warm-pool tending and scale requests). NO KEY UPDATE, not UPDATE: placements insert
    // cold starts and replicas whose foreign-key checks take KEY SHARE on this row, and FOR
    // UPDATE made every placement of the endpoint wait for each reconcile and scale request
    // (bench:placement's steady phase: 11 ms per scale request).
    const [endpoint] = await tx.rows<{
      id: string;
      orgId: string;
      desiredReplicas: number;
      activeDeploymentId: string | null;
      deleted: boolean;
    }>(Prisma.sql`SELECT id::text, "orgId"::text AS "orgId", "desiredReplicas", "activeDeploymentId"::text AS "activeDeploymentId", "deletedAt" IS NOT NULL AS deleted
      FROM "Endpoint" WHERE id = ${endpointId}::uuid FOR NO KEY UPDATE`);
    if (!endpoint)
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
    const deploymentId = endpoint.activeDeploymentId;
    const desired = endpoint.deleted || !deploymentId ? 0 : endpoint.desiredReplicas;

    // Everything else reconcile decides from, in one statement under the lock: the replicas
    // that count or drain (with their nodes' states), the endpoint's recent failures (the
    // crash-loop backoff), its lost dispatches and the warm pool's memory of it.
    const [state] = await tx.rows<ReconcileStateRow>(Prisma.sql`
      SELECT
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
          FROM "EndpointWarmPool" w WHERE w."endpointId" = ${endpointId}::uuid) AS memory`);
    // json_build_object writes a timestamp column as its text, without a zone: it is UTC.
    const utc = (text: string) => new Date(`${text}Z`);
    const replicas = state!.replicas.map((r) => ({
      ...r,
      createdAt: utc(r.createdAt),
      updatedAt: utc(r.updatedAt),
      node: r.nodeState === null ? null : { state: r.nodeState },
    }));
    const memory = warmPoolMemoryOf(state!.memory ?? undefined);
    // A replica on a lost node serves nobody: it is drained (stopped when the node comes
    // back, released when it is terminated) and a replacement is placed. So is one on a
    // node an operator drained or revoked (an idle host being retired holds none).
    const onLostNode = replicas.filter(
      (r) =>
        r.state !== "draining" &&
        r.node &&
        ["lost", "terminated", "draining"].includes(r.node.state),
    );
    const goneIntent = (r: (typeof replicas)[number]) =>
      r.node?.state === "draining" ? ("node_drained" as const) : ("node_lost" as const);
    const counted = replicas.filter(
      (r) => COUNTED_REPLICA_STATES.includes(r.state) && !onLostNode.includes(r) && !r.prewarm,
    );
    const current = counted.filter((r) => r.deploymentId === deploymentId);
    const outdated = counted.filter((r) => r.deploymentId !== deploymentId);
    // A new version rolls: the old one's ready replicas serve until the new one's can.
    const outdatedServing = outdated.filter((r) => r.state === "ready");
    const stillServing = outdatedServing.slice(
      0,
      outdatedReplicasToKeep({
        desired,
        currentReady: current.filter((r) => r.state === "ready").length,
        currentWaitingForCapacity: current.filter(
          (r) => r.state === "pending" && isWaitingForCapacity(r.pendingCause),
        ).length,
        outdatedServing: outdatedServing.length,
      }),
    );

    const surplus = [
      ...outdated.filter((r) => !stillServing.includes(r)),
      ...current
        .slice()
        .sort(
          (a, b) =>
            // A snapshot's source drains last: its capture ends in a stop anyway, and a replica
            // parked meanwhile met that stop (the park answered 404 and the replica was lost).
            Number(a.capturing) - Number(b.capturing) ||
            (DRAIN_ORDER[a.state] ?? 9) - (DRAIN_ORDER[b.state] ?? 9) ||
            b.createdAt.getTime() - a.createdAt.getTime(),
        )
        .slice(0, Math.max(0, current.length - desired)),
    ];
    const draining = [...onLostNode, ...surplus];
    // A ready replica of the current deployment scaled down is the warm pool's to park or stop;
    // not one a capture is checkpointing, which the capture's own stop ends.
    const parkable = (r: (typeof replicas)[number]) =>
      r.state === "ready" &&
      r.deploymentId === deploymentId &&
      !onLostNode.includes(r) &&
      !r.capturing;
    if (current.length > desired)
      await noteCapacityChange(tx.rows, endpoint, "surplus", now, memory);
    for (const replica of draining) {
      const gone = onLostNode.includes(replica) ? goneIntent(replica) : null;
      await tx.execute(Prisma.sql`
          UPDATE "Replica" SET state = 'draining', "stateVersion" = "stateVersion" + 1,
            "updatedAt" = ${new Date()},
            ${replicaReasonSql({
              drainIntent: gone ?? (parkable(replica) ? "park_candidate" : "scale_down"),
            })}
          WHERE id = ${replica.id}::uuid`);
      await tx.execute(Prisma.sql`
          UPDATE "ColdStart" SET status = 'cancelled', "finishedAt" = ${now},
            error = ${replicaReasonText({
              pendingCause: null,
              drainIntent: gone ?? "scale_down",
              reasonDetail: {},
            })}
          WHERE "replicaId" = ${replica.id}::uuid
            AND status IN ('scheduled', 'dispatched', 'running')`);
    }

    const created: string[] = [];
    let shortfall = deploymentId ? desired - current.length : 0;
    let backoff: string | null = null;
    if (shortfall > 0 && state!.recentFailures >= CRASH_LOOP_FAILURES) {
      backoff = `${state!.recentFailures} replicas failed every start attempt in the last ${CRASH_LOOP_WINDOW_MS / 60_000} minutes: holding back ${shortfall} replacement(s)`;
      shortfall = 0;
    }
    if (shortfall > 0) {
      // One statement however large the step, with one parameter for all the ids: as a
      // Prisma createMany, a scale-up of 500 was 2,500 parameters through its query
      // compiler, and bench:placement's 20 such reconciles held both schedulers' CPU for
      // seconds before the first placement. Ids are v7, so they sort in creation order.
      const ids = Array.from({ length: shortfall }, () => uuidV7());
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
      await noteCapacityChange(tx.rows, endpoint, "needed", now, memory);
    }

    const drainingNow = [
      ...replicas.filter((r) => r.state === "draining"),
      ...draining.map((r) => ({ ...r, state: "draining" as const })),
    ];
    const parking = draining.filter(parkable).map((r) => r.id);
    // Left for the warm-pool worker, unless it has not come for them within the grace.
    const leftToWarmPool = (r: (typeof replicas)[number]) =>
      parking.includes(r.id) ||
      ((r.drainIntent === "park_candidate" || r.drainIntent === "sleep_candidate") &&
        r.updatedAt.getTime() > now.getTime() - PARKING_GRACE_MS);
    // Pending now: those read under the lock that were not drained, then the ones just made.
    const pending = [
      ...replicas
        .filter((r) => r.state === "pending" && !draining.includes(r))
        .map((r) => ({ id: r.id, deploymentId: r.deploymentId })),
      ...created.map((id) => ({ id, deploymentId: deploymentId! })),
    ];
    return {
      desired,
      counted: counted.length - surplus.length + created.length,
      created,
      toPlace: placeJobHeads(pending),
      parking,
      toStop: drainingNow
        .filter((r) => !leftToWarmPool(r))
        .map((r) => ({
          replicaId: r.id,
          nodeId: r.nodeId,
          // A lost node may come back still running the replica: wait and stop it then.
          action:
            !r.node || r.node.state === "terminated"
              ? ("release" as const)
              : r.node.state === "lost"
                ? ("wait" as const)
                : ("stop-on-node" as const),
        })),
      // Read before the drain above cancelled its replicas' starts: those are not sent.
      toDispatch: state!.undispatched
        .filter((c) => !draining.some((r) => r.id === c.replicaId))
        .map((c) => c.id),
      backoff,
    };
  });
}

interface ReplicaRow {
  id: string;
  state: ReplicaState;
  deploymentId: string;
  nodeId: string | null;
  prewarm: boolean;
  pendingCause: ReplicaPendingCause | null;
  drainIntent: ReplicaDrainIntent | null;
  /** Timestamps as json_build_object writes them: UTC, without a zone. */
  createdAt: string;
  updatedAt: string;
  nodeState: string | null;
  /** The source of a snapshot being captured. */
  capturing: boolean;
}

interface ReconcileStateRow {
  replicas: ReplicaRow[];
  recentFailures: number;
  undispatched: { id: string; replicaId: string }[];
  memory: MemoryRow | null;
}
