import { PLACEMENT_BATCH } from "./place-replica.ts";

/**
 * Which pending replicas get a place job: per deployment, in creation order, the first of
 * every PLACEMENT_BATCH. Each job places its replica and the deployment's next pending ones
 * (place-replica.ts), so one job per batch covers them all; a job that makes progress hands
 * on whatever is left, and the sweep enqueues heads again for anything still pending.
 * One job per replica meant, in a scale-up of 500, 484 jobs finding their replica already
 * placed by another's batch.
 */
export function placeJobHeads(
  pending: readonly { id: string; deploymentId: string }[],
  batch: number = PLACEMENT_BATCH,
): string[] {
  const seen = new Map<string, number>();
  const heads: string[] = [];
  for (const replica of pending) {
    const n = seen.get(replica.deploymentId) ?? 0;
    if (n % batch === 0) heads.push(replica.id);
    seen.set(replica.deploymentId, n + 1);
  }
  return heads;
}
