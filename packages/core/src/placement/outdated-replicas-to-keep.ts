import type { ReplicaPendingCause } from "../vocabulary/index.ts";

// Rolling a new version (ARCHITECTURE.md §3 step 2): an endpoint whose active deployment changed
// keeps the old version's serving replicas until replicas of the new one are ready to take
// over, instead of draining them all at once (every new version was downtime). The new
// version's replicas are created at once — a surge of up to the whole desired count — so
// when the fleet has no room for them, one old replica at a time gives up its GPUs: never
// stuck, and never more than one replica short of what was serving.

/**
 * A pending replica placement tried and found no room for. A replica waiting for a host the
 * fleet worker could not launch (host_launch_blocked) is not counted until placement's next
 * pass marks it waiting_for_capacity again.
 */
export function isWaitingForCapacity(pendingCause: ReplicaPendingCause | null): boolean {
  return pendingCause === "waiting_for_capacity";
}

/** How many of the old version's serving replicas keep serving for now. */
export function outdatedReplicasToKeep(input: {
  desired: number;
  /** Ready replicas of the active deployment. */
  currentReady: number;
  /** Replicas of the active deployment left pending for lack of a feasible node. */
  currentWaitingForCapacity: number;
  /** Ready replicas of older deployments. */
  outdatedServing: number;
}): number {
  const uncovered = Math.max(0, input.desired - input.currentReady);
  const keep = input.currentWaitingForCapacity > 0 ? Math.max(0, uncovered - 1) : uncovered;
  return Math.min(keep, Math.max(0, input.outdatedServing));
}
