import type { DbClient } from "@thaw/db";
import { recordWebhookEvents } from "./record-webhook-event.ts";

/**
 * `spend_cap.reached`, once per episode: the fleet planner re-decides the cap on every run, so
 * the episode is kept on the org — Org.spendCapReachedAt is set (only from null, by a
 * conditional update, so concurrent runs open it once) when a run holds back demand at the
 * cap, and cleared by the first run that holds back none. The event is keyed on the moment it
 * opened. Returns the deliveries written.
 */
export async function recordSpendCapState({
  db,
  orgId,
  capUsdPerHour,
  heldBack,
  now = new Date(),
}: {
  db: DbClient;
  orgId: string;
  capUsdPerHour: number | null;
  /** The demand this run held back at the cap (none: the episode, if any, ends). */
  heldBack: readonly { gpuModel: string; gpus: number; reason: string }[];
  now?: Date;
}): Promise<string[]> {
  if (heldBack.length === 0) {
    await db.org.updateMany({
      where: { id: orgId, spendCapReachedAt: { not: null } },
      data: { spendCapReachedAt: null },
    });
    return [];
  }
  return db.$transaction(async (tx) => {
    const { count } = await tx.org.updateMany({
      where: { id: orgId, spendCapReachedAt: null },
      data: { spendCapReachedAt: now },
    });
    if (count === 0) return [];
    return recordWebhookEvents(tx, [
      {
        orgId,
        type: "spend_cap.reached",
        key: `${orgId}:${now.toISOString()}`,
        data: {
          capUsdPerHour,
          reachedAt: now.toISOString(),
          heldBack: heldBack.map((b) => ({ gpuModel: b.gpuModel, gpus: b.gpus, reason: b.reason })),
        },
        at: now,
      },
    ]);
  });
}
