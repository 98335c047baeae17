import type { Db } from "@thaw/db";
import { evaluateSloRule } from "./evaluate-slo-rule.ts";

/** How many open SLO episodes one sweep re-reads (the oldest first). */
const EPISODES_PER_SWEEP = 200;

/**
 * The scheduler's sweep: open SLO episodes re-read as time passes, so one resolves when its
 * windows cool even if the endpoint never starts again (a burn rate falls as bad starts age
 * out of the short window; only a start can raise it, and a start is evaluated as it closes).
 * Answers the deliveries written.
 */
export async function evaluateOpenAlertEpisodes({
  db,
  now = new Date(),
}: {
  db: Db;
  now?: Date;
}): Promise<string[]> {
  const open = await db.alertEpisode.findMany({
    where: { resolvedAt: null, rule: { kind: "time_to_ready_slo", enabled: true } },
    orderBy: { openedAt: "asc" },
    take: EPISODES_PER_SWEEP,
    select: { ruleId: true, endpointId: true, rule: true },
  });
  const seen = new Set<string>();
  const deliveries: string[] = [];
  for (const episode of open) {
    const key = `${episode.ruleId}:${episode.endpointId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const endpoint = await db.endpoint.findUnique({
      where: { id: episode.endpointId },
      select: { id: true, slug: true },
    });
    if (!endpoint) continue;
    deliveries.push(...(await evaluateSloRule(db, episode.rule, endpoint, now)));
  }
  return deliveries;
}
