// Multi-window, multi-burn-rate evaluation of a time-to-ready SLO, after The Site Reliability
// Workbook, ch. 5 "Alerting on SLOs" (sre.google/workbook/alerting-on-slos), Table 5-8: each
// condition fires when the error budget burns faster than its rate over BOTH a long window (so
// a blip does not page) and a short one, a twelfth of it (so the alert resets soon after the
// burning stops). The rates are the workbook's for a 30-day budget: 14.4 spends 2 % of it in
// an hour, 6 spends 5 % in six hours, 1 spends 10 % in three days.
//
// The SLI is per cold start, not per second: a start is good when it was ready within the
// rule's threshold; a failed start is bad. A window with no starts burns nothing.

export const BURN_RATE_CONDITIONS = [
  { severity: "page", longSeconds: 3_600, shortSeconds: 300, burnRate: 14.4 },
  { severity: "page", longSeconds: 21_600, shortSeconds: 1_800, burnRate: 6 },
  { severity: "ticket", longSeconds: 259_200, shortSeconds: 21_600, burnRate: 1 },
] as const;

export type BurnSeverity = (typeof BURN_RATE_CONDITIONS)[number]["severity"];

/** Every window a condition reads, longest first (the evaluator counts starts in each). */
export const BURN_RATE_WINDOWS_SECONDS: readonly number[] = [
  ...new Set(BURN_RATE_CONDITIONS.flatMap((c) => [c.longSeconds, c.shortSeconds])),
].sort((a, b) => b - a);

/** The longest window: starts older than this never matter. */
export const LONGEST_BURN_WINDOW_SECONDS = BURN_RATE_WINDOWS_SECONDS[0]!;

/** A window as people say it: "5 min", "6 h", "3 d". */
export function formatBurnWindow(seconds: number): string {
  if (seconds >= 86_400) return `${seconds / 86_400} d`;
  return seconds >= 3_600 ? `${seconds / 3_600} h` : `${seconds / 60} min`;
}

export interface WindowCount {
  windowSeconds: number;
  total: number;
  bad: number;
}

export interface BurnRateReading {
  windowSeconds: number;
  total: number;
  bad: number;
  /** The error rate over the window divided by the budget's (1 − objective); 0 with no starts. */
  burnRate: number;
}

export interface FiringCondition {
  severity: BurnSeverity;
  longSeconds: number;
  shortSeconds: number;
  threshold: number;
}

export interface BurnRateEvaluation {
  /**
   * Per severity, the first of its conditions that fires (null: none). Page and ticket are
   * separate alerts, as in the workbook: each has its own episodes.
   */
  firing: Record<BurnSeverity, FiringCondition | null>;
  readings: BurnRateReading[];
}

/** The severities, most urgent first. */
export const BURN_SEVERITIES: readonly BurnSeverity[] = [
  ...new Set(BURN_RATE_CONDITIONS.map((c) => c.severity)),
];

/** How fast a window burns the budget: its bad share over the share the objective allows. */
export function burnRate(count: { total: number; bad: number }, objective: number): number {
  if (count.total === 0) return 0;
  return count.bad / count.total / (1 - objective);
}

/**
 * Which conditions fire, from the starts counted in each window (a window not given counts
 * none): per severity, the first of its conditions whose long and short windows both burn
 * faster than its rate.
 */
export function evaluateBurnRates(
  counts: readonly WindowCount[],
  objective: number,
): BurnRateEvaluation {
  const readings = BURN_RATE_WINDOWS_SECONDS.map((windowSeconds) => {
    const count = counts.find((c) => c.windowSeconds === windowSeconds) ?? { total: 0, bad: 0 };
    return {
      windowSeconds,
      total: count.total,
      bad: count.bad,
      burnRate: burnRate(count, objective),
    };
  });
  const rateOf = (seconds: number) => readings.find((r) => r.windowSeconds === seconds)!.burnRate;
  const firing = Object.fromEntries(BURN_SEVERITIES.map((s) => [s, null])) as Record<
    BurnSeverity,
    FiringCondition | null
  >;
  for (const c of BURN_RATE_CONDITIONS)
    if (
      firing[c.severity] === null &&
      rateOf(c.longSeconds) > c.burnRate &&
      rateOf(c.shortSeconds) > c.burnRate
    )
      firing[c.severity] = {
        severity: c.severity,
        longSeconds: c.longSeconds,
        shortSeconds: c.shortSeconds,
        threshold: c.burnRate,
      };
  return { firing, readings };
}

/** The starts in each window ending at `now`, from their finish times and verdicts. */
export function countStartsInWindows(
  starts: readonly { at: Date; good: boolean }[],
  now: Date,
): WindowCount[] {
  return BURN_RATE_WINDOWS_SECONDS.map((windowSeconds) => {
    const since = now.getTime() - windowSeconds * 1000;
    let total = 0;
    let bad = 0;
    for (const s of starts)
      if (s.at.getTime() > since && s.at.getTime() <= now.getTime()) {
        total++;
        if (!s.good) bad++;
      }
    return { windowSeconds, total, bad };
  });
}
