import type { DbClient } from "@thaw/db";

/** A pending delivery whose attempt is this overdue has lost its job (or never had one). */
export const WEBHOOK_DELIVERY_OVERDUE_MS = 2 * 60_000;
/** Older deliveries are left alone: their hour of retries is long over. */
const SWEPT_FOR_MS = 24 * 3600_000;
const PER_SWEEP = 500;

/**
 * The outbox's relay: pending deliveries whose job Redis does not have — the enqueue after the
 * event's commit failed, or Redis was wiped — found from Postgres for the scheduler's sweep to
 * enqueue again. A delivery whose job still waits or backs off is enqueued again harmlessly
 * (the job's deduplication key is its id).
 */
export async function findStalledWebhookDeliveries({
  db,
  now = new Date(),
}: {
  db: DbClient;
  now?: Date;
}): Promise<string[]> {
  const overdue = new Date(now.getTime() - WEBHOOK_DELIVERY_OVERDUE_MS);
  const rows = await db.webhookDelivery.findMany({
    where: {
      status: "pending",
      createdAt: { gt: new Date(now.getTime() - SWEPT_FOR_MS) },
      OR: [{ nextAttemptAt: { lt: overdue } }, { nextAttemptAt: null, createdAt: { lt: overdue } }],
    },
    select: { id: true },
    orderBy: { createdAt: "asc" },
    take: PER_SWEEP,
  });
  return rows.map((r) => r.id);
}
