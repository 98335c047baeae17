import type { PolicyResult } from "./replay-engine.ts";
import type { PolicyFamily, ReplayPolicy } from "./replay-policies.ts";

// Frontiers, not points: each policy family swept over its setting gives a curve of
// mean wait against idle GPU-hours; whether thaw is better or only cheaper is read off the
// curves. And the target, checked per fixed-policy point F:
//   thaw has a point with no more idle GPU-hours than F whose mean wait is at most
//   max(0.5 × F's, 1.25 × the clairvoyant frontier's at F's idle GPU-hours).

export interface FrontierPoint {
  setting: string;
  meanWaitSeconds: number;
  p99WaitSeconds: number;
  idleGpuHours: number;
  gpuHours: number;
  coldStartFraction: number;
  /** Starts that woke a sleeping engine, and the host memory sleepers held (GB × hours). */
  wakes: number;
  sleepingGbHours: number;
}

export type Frontiers = Partial<Record<PolicyFamily, FrontierPoint[]>>;

export function frontierPoint(setting: string, result: PolicyResult): FrontierPoint {
  return {
    setting,
    meanWaitSeconds: result.meanWaitSeconds,
    p99WaitSeconds: result.p99WaitSeconds,
    idleGpuHours: result.idleGpuHours,
    gpuHours: result.gpuHours,
    coldStartFraction: result.coldStartFraction,
    wakes: result.coldStartsByPath.wake,
    sleepingGbHours: result.sleepingGbHours,
  };
}

export function frontiersOf(runs: { policy: ReplayPolicy; result: PolicyResult }[]): Frontiers {
  const frontiers: Frontiers = {};
  for (const { policy, result } of runs)
    (frontiers[policy.family] ??= []).push(frontierPoint(policy.setting, result));
  return frontiers;
}

/** The fixed policies thaw must beat: every point of theirs is checked. */
export const FIXED_FAMILIES: PolicyFamily[] = [
  "pull-keepalive",
  "lazy-keepalive",
  "hybrid-histogram-pull",
];

export interface TargetCheck {
  family: PolicyFamily;
  setting: string;
  idleGpuHours: number;
  meanWaitSeconds: number;
  /** The clairvoyant frontier's mean wait at no more idle GPU-hours (null: none that low). */
  boundWaitSeconds: number | null;
  /** The wait thaw must reach: max(0.5 × F's, 1.25 × the bound's). */
  targetWaitSeconds: number;
  /** Thaw's best point with no more idle GPU-hours (null: none that frugal). */
  thaw: { setting: string; meanWaitSeconds: number; idleGpuHours: number } | null;
  met: boolean;
}

/** The clairvoyant's best mean wait among its points with idle GPU-hours ≤ `idle`. */
function boundAt(clairvoyant: readonly FrontierPoint[], idle: number): number | null {
  let best: number | null = null;
  for (const p of clairvoyant)
    if (p.idleGpuHours <= idle + 1e-9 && (best === null || p.meanWaitSeconds < best))
      best = p.meanWaitSeconds;
  return best;
}

export function checkTargets(frontiers: Frontiers): TargetCheck[] {
  const thaw = frontiers.thaw ?? [];
  const clairvoyant = frontiers.clairvoyant ?? [];
  const checks: TargetCheck[] = [];
  for (const family of FIXED_FAMILIES)
    for (const point of frontiers[family] ?? []) {
      const bound = boundAt(clairvoyant, point.idleGpuHours);
      const target = Math.max(0.5 * point.meanWaitSeconds, bound === null ? 0 : 1.25 * bound);
      let best: FrontierPoint | null = null;
      for (const t of thaw)
        if (
          t.idleGpuHours <= point.idleGpuHours + 1e-9 &&
          (best === null || t.meanWaitSeconds < best.meanWaitSeconds)
        )
          best = t;
      checks.push({
        family,
        setting: point.setting,
        idleGpuHours: point.idleGpuHours,
        meanWaitSeconds: point.meanWaitSeconds,
        boundWaitSeconds: bound,
        targetWaitSeconds: round(target),
        thaw: best && {
          setting: best.setting,
          meanWaitSeconds: best.meanWaitSeconds,
          idleGpuHours: best.idleGpuHours,
        },
        met: best !== null && best.meanWaitSeconds <= target + 1e-9,
      });
    }
  return checks;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** One thaw point against thaw with sleeping engines (issue: "the frontier moves left"). */
export interface SleepingComparison {
  setting: string;
  thaw: { meanWaitSeconds: number; idleGpuHours: number };
  /** The same setting with sleeping allowed. */
  sameSetting: {
    meanWaitSeconds: number;
    idleGpuHours: number;
    wakes: number;
    sleepingGbHours: number;
  } | null;
  /**
   * Each frontier's fewest idle GPU-hours at a mean wait no longer than this thaw point's:
   * thaw's own (its Pareto front there) and with sleeping (null: no point waits as little).
   * Their ratio is how far left the frontier moved at this wait.
   */
  frontierIdleGpuHoursAtThisWait: { thaw: number; sleeping: number | null };
  /** The other axis: each frontier's least mean wait at no more idle GPU-hours than this point's. */
  frontierWaitSecondsAtThisIdle: { thaw: number; sleeping: number | null };
}

/** The fewest idle GPU-hours among `points` whose mean wait is at most `wait`. */
function leastIdleAtWait(points: readonly FrontierPoint[], wait: number): number | null {
  let least: number | null = null;
  for (const p of points)
    if (p.meanWaitSeconds <= wait + 1e-9 && (least === null || p.idleGpuHours < least))
      least = p.idleGpuHours;
  return least;
}

/** The least mean wait among `points` whose idle GPU-hours are at most `idle`. */
function leastWaitAtIdle(points: readonly FrontierPoint[], idle: number): number | null {
  let least: number | null = null;
  for (const p of points)
    if (p.idleGpuHours <= idle + 1e-9 && (least === null || p.meanWaitSeconds < least))
      least = p.meanWaitSeconds;
  return least;
}

export function compareSleeping(frontiers: Frontiers): SleepingComparison[] {
  const sleeping = frontiers["thaw-sleep"] ?? [];
  const thaw = frontiers.thaw ?? [];
  if (sleeping.length === 0) return [];
  return thaw.map((t) => {
    const same = sleeping.find((s) => s.setting === t.setting) ?? null;
    return {
      setting: t.setting,
      thaw: { meanWaitSeconds: t.meanWaitSeconds, idleGpuHours: t.idleGpuHours },
      sameSetting: same && {
        meanWaitSeconds: same.meanWaitSeconds,
        idleGpuHours: same.idleGpuHours,
        wakes: same.wakes,
        sleepingGbHours: same.sleepingGbHours,
      },
      frontierIdleGpuHoursAtThisWait: {
        thaw: leastIdleAtWait(thaw, t.meanWaitSeconds)!,
        sleeping: leastIdleAtWait(sleeping, t.meanWaitSeconds),
      },
      frontierWaitSecondsAtThisIdle: {
        thaw: leastWaitAtIdle(thaw, t.idleGpuHours)!,
        sleeping: leastWaitAtIdle(sleeping, t.idleGpuHours),
      },
    };
  });
}

/** The comparison as text: per thaw setting, and the median share of idle GPU-hours saved. */
export function sleepingTable(rows: readonly SleepingComparison[]): string {
  if (rows.length === 0) return "";
  const medianSaved = (pairs: { thaw: number; sleeping: number | null }[]) => {
    const saved = pairs
      .filter((f) => f.sleeping !== null && f.thaw > 0)
      .map((f) => 1 - f.sleeping! / f.thaw)
      .sort((a, b) => a - b);
    if (saved.length === 0) return "not comparable";
    const median = saved[Math.floor((saved.length - 1) / 2)]!;
    const share = `${(Math.abs(median) * 100).toFixed(1)}%`;
    return `${median >= 0 ? `${share} less` : `${share} more`} (median of ${saved.length} points)`;
  };
  const arrow = (f: { thaw: number; sleeping: number | null }) =>
    `${f.thaw.toFixed(2)} → ${f.sleeping === null ? "none" : f.sleeping.toFixed(2)}`;
  const table = [
    [
      "thaw setting",
      "thaw idle / wait",
      "sleeping, same setting",
      "wakes",
      "sleeping GB-h",
      "front idle at this wait",
      "front wait at this idle",
    ],
    ...rows.map((r) => [
      r.setting,
      `${r.thaw.idleGpuHours.toFixed(2)} / ${r.thaw.meanWaitSeconds.toFixed(2)}`,
      r.sameSetting
        ? `${r.sameSetting.idleGpuHours.toFixed(2)} / ${r.sameSetting.meanWaitSeconds.toFixed(2)}`
        : "-",
      r.sameSetting ? String(r.sameSetting.wakes) : "-",
      r.sameSetting ? r.sameSetting.sleepingGbHours.toFixed(0) : "-",
      arrow(r.frontierIdleGpuHoursAtThisWait),
      arrow(r.frontierWaitSecondsAtThisIdle),
    ]),
  ];
  return [
    "sleeping engines (thaw-sleep vs thaw), each frontier at each thaw point:",
    `  idle GPU-hours at no more mean wait: ${medianSaved(rows.map((r) => r.frontierIdleGpuHoursAtThisWait))}`,
    `  mean wait at no more idle GPU-hours: ${medianSaved(rows.map((r) => r.frontierWaitSecondsAtThisIdle))}`,
    align(table),
  ].join("\n");
}

/** The frontiers and the target checks as text a person reads. */
export function frontierTable(frontiers: Frontiers, checks: readonly TargetCheck[]): string {
  const rows: string[][] = [
    ["policy", "setting", "mean wait s", "p99 wait s", "idle GPU-h", "GPU-h", "cold %"],
  ];
  for (const [family, points] of Object.entries(frontiers))
    for (const p of points ?? [])
      rows.push([
        family,
        p.setting,
        p.meanWaitSeconds.toFixed(2),
        p.p99WaitSeconds.toFixed(1),
        p.idleGpuHours.toFixed(2),
        p.gpuHours.toFixed(2),
        (p.coldStartFraction * 100).toFixed(1),
      ]);
  const met = checks.filter((c) => c.met).length;
  const targetRows: string[][] = [
    [
      "fixed point",
      "its idle / wait",
      "bound wait",
      "target wait",
      "thaw point",
      "thaw idle / wait",
      "",
    ],
    ...checks.map((c) => [
      `${c.family} ${c.setting}`,
      `${c.idleGpuHours.toFixed(2)} / ${c.meanWaitSeconds.toFixed(2)}`,
      c.boundWaitSeconds === null ? "-" : c.boundWaitSeconds.toFixed(2),
      c.targetWaitSeconds.toFixed(2),
      c.thaw ? c.thaw.setting : "none as frugal",
      c.thaw ? `${c.thaw.idleGpuHours.toFixed(2)} / ${c.thaw.meanWaitSeconds.toFixed(2)}` : "-",
      c.met ? "met" : "MISSED",
    ]),
  ];
  return [
    align(rows),
    "",
    `target: thaw within max(0.5 × F, 1.25 × clairvoyant) at no more idle GPU-hours — met for ${met} of ${checks.length} fixed-policy points`,
    align(targetRows),
  ].join("\n");
}

function align(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
