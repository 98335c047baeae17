// How long the control plane keeps records that only grow (issue 23, finding 8): every scale
// request, every replica that ever ran and every Idempotency-Key would otherwise stay forever.
// What drives decisions is kept elsewhere and small (history statistics per cell, nodes,
// snapshots); the audit log is kept whole.

/** An Idempotency-Key is remembered this long: a retry after it is a new request (as Stripe's). */
export const IDEMPOTENCY_KEY_RETENTION_HOURS = 24;

/**
 * Default for THAW_RETENTION_DAYS: scale events, replicas stopped this long with their starts,
 * the GPU-time ledger, settled webhook deliveries and per-minute load samples.
 */
export const DEFAULT_RETENTION_DAYS = 90;

export interface RetentionPolicy {
  /** Scale events older than this are deleted; so are replicas stopped or failed this long. */
  retentionDays: number;
  idempotencyKeyHours: number;
}

export interface RetentionCutoffs {
  idempotencyRecordsBefore: Date;
  scaleEventsBefore: Date;
  replicasStoppedBefore: Date;
  /** GPU-time intervals ended, webhook deliveries made and load samples taken before this go. */
  recordsBefore: Date;
}

/** The instants before which each kind of record is deleted, at `now`. */
export function retentionCutoffs(now: Date, policy: RetentionPolicy): RetentionCutoffs {
  const days = new Date(now.getTime() - policy.retentionDays * 86_400_000);
  return {
    idempotencyRecordsBefore: new Date(now.getTime() - policy.idempotencyKeyHours * 3_600_000),
    scaleEventsBefore: days,
    replicasStoppedBefore: days,
    recordsBefore: days,
  };
}
