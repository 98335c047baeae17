import type { ReplicaDrainIntent, ReplicaPendingCause, ReplicaState } from "../vocabulary/index.ts";
import { isWaitingForCapacity, outdatedReplicasToKeep } from "./outdated-replicas-to-keep.ts";

// Reconcile's decision (ARCHITECTURE.md §3 step 2), pure: desired vs actual for one endpoint,
// from what reconcileEndpoint read. Apart from its writes so that the sweep can decide on an
// unlocked read first and take the endpoint's lock only when there is something to change.

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

/** One of the endpoint's replicas that count or drain, with its node's state. */
export interface ReconcileReplica {
  id: string;
  state: ReplicaState;
  deploymentId: string;
  nodeId: string | null;
  prewarm: boolean;
  pendingCause: ReplicaPendingCause | null;
  drainIntent: ReplicaDrainIntent | null;
  createdAt: Date;
  updatedAt: Date;
  /** null: on no node. */
  nodeState: string | null;
  /** The source of a snapshot being captured. */
  capturing: boolean;
}

export interface ReconcileInput {
  endpoint: { desiredReplicas: number; activeDeploymentId: string | null; deleted: boolean };
  replicas: ReconcileReplica[];
  /** The endpoint's replicas that failed every start attempt within CRASH_LOOP_WINDOW_MS. */
  recentFailures: number;
  /** Its cold starts still scheduled past UNDISPATCHED_AFTER_MS (lost dispatch jobs). */
  undispatched: { id: string; replicaId: string }[];
  now: Date;
}

/** The intents reconcile drains replicas with. */
type ReconcileDrainIntent = Extract<
  ReplicaDrainIntent,
  "node_lost" | "node_drained" | "park_candidate" | "scale_down"
>;

export interface ReconcileDecision {
  desired: number;
  /** The endpoint's active deployment, the one a shortfall is created for (null: none). */
  deploymentId: string | null;
  /** Counted replicas that stay (before any created). */
  counted: number;
  /** To mark draining, with the intent they drain for; their open starts are cancelled. */
  drains: {
    replicaId: string;
    drainIntent: ReconcileDrainIntent;
    /** Why their starts are cancelled: the node's loss or drain, else the scale-down. */
    cancelIntent: Exclude<ReconcileDrainIntent, "park_candidate">;
  }[];
  /** The warm pool's note of the change: more replicas than desired, or fewer. */
  capacityNote: "surplus" | "needed" | null;
  /** Replicas to create pending (0 while the crash-loop backoff holds them back). */
  shortfall: number;
  /** Set when replacements are held back by the crash-loop backoff. */
  backoff: string | null;
  /** Pending replicas that stay, oldest first (before any created). */
  pending: { id: string; deploymentId: string }[];
  /** Scaled-down ready replicas left for the warm-pool worker to park or stop. */
  parking: string[];
  /** Replicas being drained; the worker stops them on their node, then finishes the stop. */
  toStop: {
    replicaId: string;
    nodeId: string | null;
    action: "stop-on-node" | "release" | "wait";
  }[];
  /** Cold starts placed but never dispatched (a lost dispatch job). */
  toDispatch: string[];
}

export function decideReconcile({
  endpoint,
  replicas,
  recentFailures,
  undispatched,
  now,
}: ReconcileInput): ReconcileDecision {
  const deploymentId = endpoint.activeDeploymentId;
  const desired = endpoint.deleted || !deploymentId ? 0 : endpoint.desiredReplicas;
  // A replica on a lost node serves nobody: it is drained (stopped when the node comes
  // back, released when it is terminated) and a replacement is placed. So is one on a
  // node an operator drained or revoked (an idle host being retired holds none).
  const onLostNode = replicas.filter(
    (r) =>
      r.state !== "draining" &&
      r.nodeState !== null &&
      ["lost", "terminated", "draining"].includes(r.nodeState),
  );
  const goneIntent = (r: ReconcileReplica) =>
    r.nodeState === "draining" ? ("node_drained" as const) : ("node_lost" as const);
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
  const parkable = (r: ReconcileReplica) =>
    r.state === "ready" &&
    r.deploymentId === deploymentId &&
    !onLostNode.includes(r) &&
    !r.capturing;
  const drains = draining.map((r) => {
    const gone = onLostNode.includes(r) ? goneIntent(r) : null;
    return {
      replicaId: r.id,
      drainIntent: gone ?? (parkable(r) ? ("park_candidate" as const) : ("scale_down" as const)),
      cancelIntent: gone ?? ("scale_down" as const),
    };
  });

  let shortfall = deploymentId ? desired - current.length : 0;
  let backoff: string | null = null;
  if (shortfall > 0 && recentFailures >= CRASH_LOOP_FAILURES) {
    backoff = `${recentFailures} replicas failed every start attempt in the last ${CRASH_LOOP_WINDOW_MS / 60_000} minutes: holding back ${shortfall} replacement(s)`;
    shortfall = 0;
  }
  const capacityNote =
    current.length > desired ? ("surplus" as const) : shortfall > 0 ? ("needed" as const) : null;

  const drainingNow = [
    ...replicas.filter((r) => r.state === "draining"),
    ...draining.map((r) => ({ ...r, state: "draining" as const })),
  ];
  const parking = draining.filter(parkable).map((r) => r.id);
  // Left for the warm-pool worker, unless it has not come for them within the grace.
  const leftToWarmPool = (r: ReconcileReplica) =>
    parking.includes(r.id) ||
    ((r.drainIntent === "park_candidate" || r.drainIntent === "sleep_candidate") &&
      r.updatedAt.getTime() > now.getTime() - PARKING_GRACE_MS);
  return {
    desired,
    deploymentId,
    counted: counted.length - surplus.length,
    drains,
    capacityNote,
    shortfall: Math.max(0, shortfall),
    backoff,
    // Pending now: those read that were not drained.
    pending: replicas
      .filter((r) => r.state === "pending" && !draining.includes(r))
      .map((r) => ({ id: r.id, deploymentId: r.deploymentId })),
    parking,
    toStop: drainingNow
      .filter((r) => !leftToWarmPool(r))
      .map((r) => ({
        replicaId: r.id,
        nodeId: r.nodeId,
        // A lost node may come back still running the replica: wait and stop it then.
        action:
          r.nodeState === null || r.nodeState === "terminated"
            ? ("release" as const)
            : r.nodeState === "lost"
              ? ("wait" as const)
              : ("stop-on-node" as const),
      })),
    // Read before the drain cancels its replicas' starts: those are not sent.
    toDispatch: undispatched
      .filter((c) => !draining.some((r) => r.id === c.replicaId))
      .map((c) => c.id),
  };
}

/**
 * Whether carrying the decision out would write nothing and hand the worker nothing to do:
 * then the sweep need not take the endpoint's lock to make it again.
 */
export function reconcileChangesNothing(decision: ReconcileDecision): boolean {
  return (
    decision.drains.length === 0 &&
    decision.capacityNote === null &&
    decision.shortfall === 0 &&
    decision.backoff === null &&
    decision.pending.length === 0 &&
    decision.parking.length === 0 &&
    decision.toStop.length === 0 &&
    decision.toDispatch.length === 0
  );
}
