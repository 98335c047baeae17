import { z } from "zod";
import type { Schemas } from "../api.ts";

// What `thaw cold-starts watch` prints per cold start: a status line (redrawn as phases land:
// outcome, predicted beside measured seconds, a bar per phase) and, once, why its path won —
// the scheduler's explanation and the best option of every other path with why it lost.
// Pure: the command fetches, this renders.

export type ColdStartDetail = Schemas["ColdStartDetail"];

/** The bars of one line share this many cells, each phase its share of the start. */
const BAR_CELLS = 30;
const CLOSED = new Set(["succeeded", "failed", "cancelled"]);

export function isClosed(start: { status: string }): boolean {
  return CLOSED.has(start.status);
}

function seconds(value: number | null | undefined): string {
  return value === null || value === undefined ? "?" : `${value.toFixed(1)}s`;
}

/** Measured seconds so far: the phases that ended. */
export function measuredSeconds(start: ColdStartDetail): number {
  return start.phases.reduce((sum, p) => sum + (p.seconds ?? 0), 0);
}

/**
 * `pull ████████ 82.9s | create █ 1.0s | …`: each phase's bar is its share of the larger of
 * predicted and measured seconds, so a start running late shows it; a phase still open is `▒ …`.
 */
export function phaseBars(start: ColdStartDetail): string {
  const scale = Math.max(start.predictedSeconds, measuredSeconds(start), 1e-9);
  return start.phases
    .filter((p) => p.phase !== "ready")
    .map((p) =>
      p.seconds === null
        ? `${p.phase} ▒ …`
        : `${p.phase} ${"█".repeat(Math.max(1, Math.round((p.seconds / scale) * BAR_CELLS)))} ${seconds(p.seconds)}`,
    )
    .join(" | ");
}

export function outcome(start: ColdStartDetail): string {
  switch (start.status) {
    case "succeeded":
      return "✓ ready";
    case "failed":
      return `✗ failed${start.failedPhase ? ` in ${start.failedPhase}` : ""}${start.error ? `: ${start.error}` : ""}`;
    case "cancelled":
      return "– cancelled";
    default:
      return `… ${start.status}`;
  }
}

/**
 * What was predicted: the mean and the p10–p90 interval (predictedSeconds is the objective's
 * figure, a p90 endpoint's would read as a 2× error); starts placed before the interval was
 * kept show that figure alone.
 */
export function predictedText(start: ColdStartDetail): string {
  const { predictedMeanSeconds: mean, predictedP10Seconds: p10, predictedP90Seconds: p90 } = start;
  if (mean === null || p10 === null || p90 === null) return seconds(start.predictedSeconds);
  return `${seconds(mean)} (p10–p90 ${p10.toFixed(1)}–${seconds(p90)})`;
}

/** The status line: what it is, how it is going, then the bars (the part a narrow terminal cuts). */
export function coldStartLine(start: ColdStartDetail): string {
  const actual = isClosed(start)
    ? seconds(start.actualSeconds)
    : `${seconds(measuredSeconds(start))} so far`;
  const bars = phaseBars(start);
  return [
    `${start.endpoint.slug} ${start.id.slice(0, 8)} ${start.path}${start.attempt > 1 ? ` (attempt ${start.attempt})` : ""}`,
    outcome(start),
    `predicted ${predictedText(start)}, actual ${actual}`,
    bars.length > 0 ? bars : "(no phase yet)",
  ].join("  ");
}

/** ColdStart.options as the scheduler records it (core's placement/options-record.ts). */
const OptionsWeighed = z.object({
  feasible: z
    .array(
      z.object({
        nodeName: z.string(),
        path: z.string(),
        chosen: z.boolean(),
        predictedSeconds: z.number(),
        lostBecause: z.string().nullable().optional(),
      }),
    )
    .catch([]),
  infeasible: z
    .array(z.object({ path: z.string(), reason: z.string(), nodes: z.number() }))
    .catch([]),
});

/**
 * The other paths as the scheduler weighed them: each feasible path's best option and why it
 * lost, then the paths no node could take and why.
 */
export function weighedOptions(start: ColdStartDetail): string[] {
  const parsed = OptionsWeighed.safeParse(start.options);
  if (!parsed.success) return [];
  const { feasible, infeasible } = parsed.data;
  const chosen = feasible.find((o) => o.chosen);
  const lines: string[] = [];
  const bestOf = new Map<string, (typeof feasible)[number]>();
  for (const o of feasible) {
    if (o === chosen || o.path === start.path) continue;
    const best = bestOf.get(o.path);
    if (!best || o.predictedSeconds < best.predictedSeconds) bestOf.set(o.path, o);
  }
  for (const o of bestOf.values())
    lines.push(
      `${o.path} ${seconds(o.predictedSeconds)} on ${o.nodeName}${o.lostBecause ? ` (${o.lostBecause})` : ""}`,
    );
  const feasiblePaths = new Set(feasible.map((o) => o.path));
  const reasons = new Map<string, string[]>();
  for (const i of infeasible) {
    if (feasiblePaths.has(i.path)) continue;
    const list = reasons.get(i.path) ?? [];
    list.push(`${i.reason} (${i.nodes} ${i.nodes === 1 ? "node" : "nodes"})`);
    reasons.set(i.path, list);
  }
  for (const [path, why] of reasons) lines.push(`${path} ✗ ${why.join("; ")}`);
  return lines;
}

/** Why this path: the scheduler's own words, and what the other paths would have taken. */
export function whyLines(start: ColdStartDetail): string[] {
  const explanation = start.explanation.trim() || "the fastest option";
  const others = weighedOptions(start);
  return [
    `  why ${start.path}${start.explored ? " (exploring)" : ""}: ${explanation}`,
    ...(others.length > 0 ? [`  weighed: ${others.join(" · ")}`] : []),
  ];
}
