import { z } from "zod";
import { SWEEP_SLICE_ENDPOINTS } from "../placement/find-lost-work.ts";

/**
 * Queue contracts (ARCHITECTURE.md §2–3). Payloads carry ids only — workers read state from
 * Postgres, never from the job — and never secrets. Producers validate on enqueue and
 * workers validate on consume with the same schema.
 */
const Id = z.uuid();

/** The most cold starts one dispatch job carries (a place batch is at most 32). */
export const DISPATCH_BATCH_MAX = 64;

export const QUEUES = {
  reconcile: {
    name: "reconcile",
    payload: z.object({ endpointId: Id }).strict(),
    /** One pending reconcile per endpoint is enough: reconcile is level-triggered. */
    jobId: (p: { endpointId: string }) => `reconcile-${p.endpointId}`,
  },
  place: {
    name: "place",
    payload: z.object({ replicaId: Id }).strict(),
    jobId: (p: { replicaId: string }) => `place-${p.replicaId}`,
  },
  dispatch: {
    name: "dispatch",
    /**
     * The cold starts one place batch committed, sent together: one job per batch rather
     * than per start (a job costs Redis round trips on both sides; the starts are sent in
     * parallel). The sweep's re-dispatch of a lost start is a batch of one.
     */
    payload: z.object({ coldStartIds: z.array(Id).min(1).max(DISPATCH_BATCH_MAX) }).strict(),
    /** Each start is committed by exactly one batch, so its first start names it. */
    jobId: (p: { coldStartIds: string[] }) =>
      p.coldStartIds.length === 1
        ? `dispatch-${p.coldStartIds[0]}`
        : `dispatch-${p.coldStartIds[0]}+${p.coldStartIds.length - 1}`,
  },
  fleet: {
    name: "fleet",
    /** Grow or shrink one org's hosts; or (`gc`) reconcile the provider's instances with Postgres. */
    payload: z.union([
      z.object({ orgId: Id, reason: z.enum(["pending-replicas", "sweep"]) }).strict(),
      z.object({ reason: z.literal("gc") }).strict(),
    ]),
    jobId: (p: { orgId: string } | { reason: "gc" }) =>
      "orgId" in p ? `fleet-${p.orgId}` : "fleet-gc",
  },
  warmPool: {
    name: "warm-pool",
    payload: z.object({ endpointId: Id }).strict(),
    jobId: (p: { endpointId: string }) => `warm-pool-${p.endpointId}`,
  },
  sweep: {
    name: "sweep",
    /**
     * One slice of the periodic sweep's walk (take-sweep-slice.ts): each endpoint's reconcile
     * and warm-pool tending, in case Redis lost the live ones, the slice's endpoints one after
     * the other in one job. A job per endpoint and work was 68 jobs a second at 34 endpoints a
     * second, and BullMQ's own scripts were the largest part of an idle scheduler's CPU.
     * A queue of its own, with its own few worker slots: the sweep's work never holds a slot a
     * scale event's reconcile is waiting for (as priorities alone let it: bench:placement's p99
     * at 50 events/s was 0.5–0.7 s with the sweep's reconciles of 500-replica endpoints in the
     * live slots, 60–150 ms without the sweep). Its own deduplication key, so a live job is
     * never folded into a waiting sweep job; a live job and the sweep's run of one endpoint may
     * both run, one after the other or side by side: the reconcile and warm-pool use cases take
     * the endpoint's row lock, so the second finds the first's work done.
     */
    payload: z.object({ endpointIds: z.array(Id).min(1).max(SWEEP_SLICE_ENDPOINTS) }).strict(),
    /** A slice is named by its first endpoint and its size, as a dispatch batch is. */
    jobId: (p: { endpointIds: string[] }) =>
      `sweep-${p.endpointIds[0]}+${p.endpointIds.length - 1}`,
  },
  snapshot: {
    name: "snapshot",
    payload: z.object({ deploymentId: Id }).strict(),
    jobId: (p: { deploymentId: string }) => `snapshot-${p.deploymentId}`,
  },
  history: {
    name: "history",
    payload: z.object({ coldStartId: Id }).strict(),
    jobId: (p: { coldStartId: string }) => `history-${p.coldStartId}`,
  },
  webhookDelivery: {
    name: "webhook-delivery",
    payload: z.object({ deliveryId: Id }).strict(),
    jobId: (p: { deliveryId: string }) => `webhook-delivery-${p.deliveryId}`,
    /**
     * A receiver that is down is tried 8 times over about an hour (30 s doubling: 30 s … 32 min,
     * 63.5 min in all); the worker records each attempt and ends early on a 2xx or a final 4xx.
     */
    jobOptions: { attempts: 8, backoff: { type: "exponential", delay: 30_000 } },
  },
  whatIf: {
    name: "what-if",
    /**
     * One endpoint's what-if over a window (what-if/): the web waits on the job. `key` names
     * the run (endpoint, window, load and settings hashed), and is its job id, so views that
     * ask the same share one run and its answer while it is kept.
     */
    payload: z
      .object({
        orgId: Id,
        endpointId: Id,
        from: z.iso.datetime(),
        to: z.iso.datetime(),
        key: z.string().regex(/^[0-9a-f]{32}$/),
      })
      .strict(),
    jobId: (p: { endpointId: string; key: string }) => `what-if-${p.endpointId}-${p.key}`,
    /** A replay that failed would fail again: no retry. Answers are kept 5 minutes to share. */
    jobOptions: {
      attempts: 1,
      removeOnComplete: { age: 300 },
      removeOnFail: { age: 300 },
    },
  },
} as const;

export type QueueKey = keyof typeof QUEUES;
export type QueuePayload<K extends QueueKey> = z.infer<(typeof QUEUES)[K]["payload"]>;

/**
 * Defaults for every job: bounded retries with exponential backoff, and bounded history
 * so Redis (noeviction) cannot fill up with finished jobs. A completed job is removed at
 * once: Postgres holds what it did (cold starts with their decisions, the audit log), and
 * keeping the last thousand meant a trim of the completed set on every completion — at
 * hundreds of placements a second, a large share of Redis's time. Failed jobs are kept
 * a day, for the operator.
 */
export const DEFAULT_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: "exponential", delay: 500 },
  removeOnComplete: true,
  removeOnFail: { count: 5000, age: 24 * 3600 },
} as const;

/**
 * A job as every producer adds it (the web app's enqueue, the scheduler's enqueue and
 * enqueueMany): the payload checked against the contract, and deduplicated on the entity —
 * the contract's job key. Not a custom job id: BullMQ keeps finished jobs for a while and
 * would silently drop a new job with a finished one's id. `keepLastIfActive` means a change
 * that lands while the entity's job runs gets one more run afterwards: never lost, never
 * parallel. The shape is BullMQ's `{ name, data, opts }` (Queue.add's arguments, addBulk's items).
 */
export function jobOf<K extends QueueKey>(queue: K, payload: QueuePayload<K>) {
  const contract = QUEUES[queue];
  const data = contract.payload.parse(payload) as QueuePayload<K>;
  const own = "jobOptions" in contract ? contract.jobOptions : {};
  return {
    name: contract.name,
    data,
    opts: {
      ...own,
      deduplication: {
        id: (contract.jobId as (p: QueuePayload<K>) => string)(data),
        keepLastIfActive: true,
      },
    },
  };
}

/**
 * A what-if job (the one queue whose job id is the contract's own): unlike entity work, a
 * finished run with the same key is the answer wanted, so a repeated add must find it.
 */
export function whatIfJobOf(payload: QueuePayload<"whatIf">) {
  const contract = QUEUES.whatIf;
  const data = contract.payload.parse(payload);
  return {
    name: contract.name,
    data,
    opts: { ...contract.jobOptions, jobId: contract.jobId(data) },
  };
}

/** Redis channel names for live events (server-sent events in the dashboard). */
export const LIVE_CHANNELS = {
  org: (orgId: string) => `thaw:live:org:${orgId}`,
} as const;

/**
 * What flows on an org's live channel and out of GET /api/v1/stream: which cold starts got
 * new phases or closed. Ids only — a client reads the rest through the API, authorized.
 */
export const LiveEvent = z
  .object({
    type: z.literal("cold_starts"),
    coldStartIds: z.array(Id).max(1_000),
    closedIds: z.array(Id).max(1_000),
    at: z.iso.datetime(),
  })
  .strict();
export type LiveEvent = z.infer<typeof LiveEvent>;

/** Periodic sweep interval: anything lost in Redis is repaired from Postgres within this. */
export const RECONCILE_SWEEP_MS = 15_000;
