export {
  DEFAULT_JOB_OPTIONS,
  DISPATCH_BATCH_MAX,
  jobOf,
  LIVE_CHANNELS,
  LiveEvent,
  QUEUES,
  RECONCILE_SWEEP_MS,
  type QueueKey,
  type QueuePayload,
} from "./contracts.ts";
