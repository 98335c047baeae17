import type { Schemas } from "../api.ts";

// One line per cold start for `thaw cold-starts watch`: the path, a bar per phase as phases
// land (each as long as its share of the start), the prediction beside what was measured,
// and the outcome. Pure: the command fetches, this renders.

export type ColdStartDetail = Schemas["ColdStartDetail"];

const BAR_WIDTH = 40;
const CLOSED = new Set(["succeeded", "failed", "cancelled"]);

export function isClosed(start: Pick<ColdStartDetail, "status">): boolean {
  return CLOSED.has(start.status);
}

function seconds(value: number | null | undefined): string {
  return value === null || value === undefined ? "?" : `${value.toFixed(1)}s`;
}

/** Measured seconds so far: the phases that ended. */
export function measuredSeconds(start: ColdStartDetail): number {
  return start.phases.reduce((sum, p) => sum + (p.seconds ?? 0), 0);
}

/** `pull ████████ 40.1s | create █ 2.0s | …`: bars scaled to the larger of predicted and measured. */
export function phaseBars(start: ColdStartDetail): string {
  const scale = Math.max(start.predictedSeconds, measuredSeconds(start), 1e-9);
  return start.phases
    .filter((p) => p.phase !== "ready")
    .map((p) => {
      const width =
        p.seconds === null ? 1 : Math.max(1, Math.round((p.seconds / scale) * BAR_WIDTH));
      const bar = p.seconds === null ? "▒" : "█".repeat(width);
      return `${p.phase} ${bar} ${p.seconds === null ? "…" : seconds(p.seconds)}`;
    })
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

/** The whole line. */
export function coldStartLine(start: ColdStartDetail): string {
  const actual = isClosed(start)
    ? seconds(start.actualSeconds)
    : `${seconds(measuredSeconds(start))} so far`;
  const bars = phaseBars(start);
  return [
    `${start.endpoint.slug} ${start.id.slice(0, 8)} ${start.path}`,
    bars.length > 0 ? bars : "(no phase yet)",
    `predicted ${seconds(start.predictedSeconds)}, actual ${actual}`,
    outcome(start),
  ].join("  ");
}

/** Why this path: the scheduler's own explanation, and the runner-up it beat. */
export function whyLine(start: ColdStartDetail): string {
  const options = Array.isArray(start.options)
    ? (start.options as { path?: string; predictedSeconds?: number; chosen?: boolean }[])
    : [];
  const runnerUp = options
    .filter((o) => !o.chosen && typeof o.predictedSeconds === "number")
    .sort((a, b) => a.predictedSeconds! - b.predictedSeconds!)[0];
  const beat = runnerUp
    ? ` (next best: ${runnerUp.path} at ${seconds(runnerUp.predictedSeconds)})`
    : "";
  const explanation = start.explanation.trim() || `${start.path} was the fastest option`;
  return `  ${start.path} chosen: ${explanation}${beat}`;
}
