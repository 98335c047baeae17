export { pruneExpiredRecords, type PrunedRecords } from "./prune-expired-records.ts";
export {
  DEFAULT_RETENTION_DAYS,
  IDEMPOTENCY_KEY_RETENTION_HOURS,
  retentionCutoffs,
  type RetentionCutoffs,
  type RetentionPolicy,
} from "./retention-policy.ts";
