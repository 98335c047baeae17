import type { LiveEvent, QueueKey, QueuePayload } from "./contracts.ts";

// A use case that changes what the scheduler should do says so in its answer: the work that
// follows (a job, a live notice), as data. The transport hands it to its one producer after
// the use case returns; it never decides for itself what comes next. The work is a nudge:
// what was asked is committed in Postgres, and the scheduler's sweep finds it without one.

/** A job for one of the scheduler's queues (payloads as the queue contracts declare them). */
export type QueuedWork = { [K in QueueKey]: { queue: K; payload: QueuePayload<K> } }[QueueKey];

/** The org's live listeners (dashboard, GET /api/v1/stream) should re-read these cold starts. */
export interface LiveNotice {
  live: LiveEvent["type"];
  orgId: string;
  coldStartIds: string[];
  closedIds: string[];
}

export type FollowUp = QueuedWork | LiveNotice;

/** A use case's answer and the work that follows from it. */
export interface WithFollowUps<T> {
  result: T;
  followUps: FollowUp[];
}

/** A job for `queue`, typed by its contract. */
export function queued<K extends QueueKey>(queue: K, payload: QueuePayload<K>): FollowUp {
  return { queue, payload } as QueuedWork;
}

/** The endpoint's desired state changed: reconcile it now rather than at the next sweep. */
export function reconcileSoon(endpointId: string): FollowUp {
  return queued("reconcile", { endpointId });
}
