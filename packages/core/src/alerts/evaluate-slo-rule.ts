import type { Db } from "@thaw/db";
import { openAlertEpisode, resolveAlertEpisode } from "./alert-episodes.ts";
import {
  BURN_SEVERITIES,
  countStartsInWindows,
  evaluateBurnRates,
  LONGEST_BURN_WINDOW_SECONDS,
} from "./burn-rate-conditions.ts";

const hours = (s: number) =>
  s >= 86_400 ? `${s / 86_400} d` : s >= 3600 ? `${s / 3600} h` : `${s / 60} min`;

/**
 * A time-to-ready SLO rule on one endpoint, now: its closed starts of the longest window
 * counted per window (good: ready within the threshold; a failed start is bad), each
 * severity's episode opened or resolved by the burn-rate conditions. Answers the deliveries
 * written.
 */
export async function evaluateSloRule(
  db: Db,
  rule: {
    id: string;
    orgId: string;
    name: string;
    thresholdSeconds: number | null;
    objective: number | null;
  },
  endpoint: { id: string; slug: string },
  now: Date,
): Promise<string[]> {
  if (rule.thresholdSeconds === null || rule.objective === null) return [];
  const threshold = rule.thresholdSeconds;
  const closed = await db.coldStart.findMany({
    where: {
      endpointId: endpoint.id,
      status: { in: ["succeeded", "failed"] },
      finishedAt: { gt: new Date(now.getTime() - LONGEST_BURN_WINDOW_SECONDS * 1000), lte: now },
    },
    select: { finishedAt: true, status: true, actualSeconds: true },
  });
  const starts = closed.map((s) => ({
    at: s.finishedAt!,
    good: s.status === "succeeded" && s.actualSeconds !== null && s.actualSeconds <= threshold,
  }));
  const evaluation = evaluateBurnRates(countStartsInWindows(starts, now), rule.objective);
  const deliveries: string[] = [];
  for (const severity of BURN_SEVERITIES) {
    const target = {
      orgId: rule.orgId,
      rule: { id: rule.id, name: rule.name, kind: "time_to_ready_slo" as const },
      endpoint,
      severity,
    };
    const firing = evaluation.firing[severity];
    const reading = (w: number) => evaluation.readings.find((r) => r.windowSeconds === w)!;
    if (firing) {
      const long = reading(firing.longSeconds);
      const short = reading(firing.shortSeconds);
      const budget = `${(rule.objective * 100).toFixed(2).replace(/\.?0+$/, "")} % within ${threshold} s`;
      deliveries.push(
        ...(await openAlertEpisode(db, target, {
          summary: `time-to-ready SLO (${budget}) burning ${long.burnRate.toFixed(1)}× over ${hours(firing.longSeconds)} (${long.bad} of ${long.total} starts bad) and ${short.burnRate.toFixed(1)}× over ${hours(firing.shortSeconds)}: past ${firing.threshold}×`,
          details: { condition: firing, readings: evaluation.readings },
          at: now,
        })),
      );
    } else
      deliveries.push(
        ...(await resolveAlertEpisode(db, target, {
          summary: "no burn-rate condition of this severity fires",
          at: now,
        })),
      );
  }
  return deliveries;
}
