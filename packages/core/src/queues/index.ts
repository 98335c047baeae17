export {
  DEFAULT_JOB_OPTIONS,
  DISPATCH_BATCH_MAX,
  jobOf,
  LIVE_CHANNELS,
  LiveEvent,
  QUEUES,
  RECONCILE_SWEEP_MS,
  whatIfJobOf,
  type QueueKey,
  type QueuePayload,
} from "./contracts.ts";
export {
  queued,
  reconcileSoon,
  type FollowUp,
  type LiveNotice,
  type QueuedWork,
  type WithFollowUps,
} from "./follow-ups.ts";
