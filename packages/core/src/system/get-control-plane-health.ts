import type { Db } from "@thaw/db";
import { z } from "zod";
import type { Actor } from "../auth/index.ts";

/** A scheduler that has not reported for this long is shown as down. */
export const SERVICE_STALE_AFTER_SECONDS = 15;

/** Whether the schedulers are alive, and each instance's age: nothing more (see below). */
export const ControlPlaneHealth = z.object({
  scheduler: z.object({
    healthy: z.boolean(),
    instances: z.array(
      z.object({
        service: z.string(),
        startedAt: z.date(),
        lastSeenAt: z.date(),
        ageSeconds: z.number(),
        healthy: z.boolean(),
      }),
    ),
  }),
});
export type ControlPlaneHealth = z.infer<typeof ControlPlaneHealth>;

/**
 * Health of the control plane's processes as the dashboard shows it: whether each scheduler
 * instance is alive and for how long. Any signed-in actor may read it, so it says nothing
 * more — no host names, pids or queue depths (those are every tenant's load, and the
 * operator's /metrics and logs carry them).
 */
export async function getControlPlaneHealth({
  db,
}: {
  actor: Actor;
  db: Db;
}): Promise<ControlPlaneHealth> {
  const since = new Date(Date.now() - 10 * 60 * 1000);
  const beats = await db.serviceHeartbeat.findMany({
    where: { lastSeenAt: { gt: since } },
    orderBy: { lastSeenAt: "desc" },
    take: 50,
  });
  const now = Date.now();
  const instances = beats.map((b) => {
    const ageSeconds = (now - b.lastSeenAt.getTime()) / 1000;
    return {
      service: b.service,
      startedAt: b.startedAt,
      lastSeenAt: b.lastSeenAt,
      ageSeconds,
      healthy: ageSeconds <= SERVICE_STALE_AFTER_SECONDS,
    };
  });
  const schedulers = instances.filter((i) => i.service === "scheduler");
  return { scheduler: { healthy: schedulers.some((s) => s.healthy), instances: schedulers } };
}
