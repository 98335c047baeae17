import { Prisma, type Db } from "@thaw/db";
import { openAlertEpisode, resolveAlertEpisode } from "./alert-episodes.ts";
import {
  BURN_RATE_WINDOWS_SECONDS,
  BURN_SEVERITIES,
  evaluateBurnRates,
  formatBurnWindow,
  LONGEST_BURN_WINDOW_SECONDS,
  type WindowCount,
} from "./burn-rate-conditions.ts";

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
  // Counted in PostgreSQL, one row per window: this runs at every closed start of a watched
  // endpoint, and a busy one closes thousands of starts in the longest window. (The same
  // count as countStartsInWindows, which the burn-rate tests use as their reference.)
  const counts = await db.$queryRaw<WindowCount[]>(Prisma.sql`
    WITH closed AS (
      SELECT "finishedAt",
             COALESCE(status = 'succeeded' AND "actualSeconds" <= ${threshold}, false) AS good
      FROM "ColdStart"
      WHERE "endpointId" = ${endpoint.id}::uuid
        AND status IN ('succeeded', 'failed')
        AND "finishedAt" > ${new Date(now.getTime() - LONGEST_BURN_WINDOW_SECONDS * 1000)}
        AND "finishedAt" <= ${now})
    SELECT w.seconds AS "windowSeconds",
           count(*)::int AS total,
           (count(*) FILTER (WHERE NOT closed.good))::int AS bad
    FROM unnest(${[...BURN_RATE_WINDOWS_SECONDS]}::int[]) AS w(seconds)
    JOIN closed ON closed."finishedAt" > ${now}::timestamp - w.seconds * interval '1 second'
    GROUP BY w.seconds`);
  const evaluation = evaluateBurnRates(counts, rule.objective);
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
          summary: `time-to-ready SLO (${budget}) burning ${long.burnRate.toFixed(1)}× over ${formatBurnWindow(firing.longSeconds)} (${long.bad} of ${long.total} starts bad) and ${short.burnRate.toFixed(1)}× over ${formatBurnWindow(firing.shortSeconds)}: past ${firing.threshold}×`,
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
