import type { BottleneckHint } from "../analytics/bottleneck-hints.ts";
import type { Phase } from "../vocabulary/index.ts";

// What a slow-start alert says: by how much the start missed its predicted p90, which phase
// took longest, and what bounded that phase (its bottleneck hint, the one that accounts for
// most of it) — the line an on-call engineer can act on without opening the dashboard.

export interface SlowStartFinding {
  slowestPhase: { phase: Phase; seconds: number } | null;
  /** The slowest phase's hint that accounts for most of it; null: none names a bound. */
  hint: { bound: BottleneckHint["bound"]; text: string; attributedSeconds: number } | null;
  summary: string;
}

export function slowStartFinding(input: {
  path: string;
  actualSeconds: number;
  predictedP90Seconds: number;
  phases: readonly { phase: Phase; seconds: number | null }[];
  hints: readonly BottleneckHint[];
}): SlowStartFinding {
  let slowest: { phase: Phase; seconds: number } | null = null;
  for (const p of input.phases)
    if (p.phase !== "ready" && p.seconds !== null && (!slowest || p.seconds > slowest.seconds))
      slowest = { phase: p.phase, seconds: p.seconds };
  let hint: BottleneckHint | null = null;
  if (slowest)
    for (const h of input.hints)
      if (h.phase === slowest.phase && (!hint || h.attributedSeconds > hint.attributedSeconds))
        hint = h;
  const head = `${input.path} start took ${input.actualSeconds.toFixed(1)} s against a predicted p90 of ${input.predictedP90Seconds.toFixed(1)} s`;
  const tail = !slowest
    ? ""
    : hint
      ? `; ${hint.text}`
      : `; slowest phase ${slowest.phase} (${slowest.seconds.toFixed(1)} s), no bound named`;
  return {
    slowestPhase: slowest,
    hint: hint && { bound: hint.bound, text: hint.text, attributedSeconds: hint.attributedSeconds },
    summary: head + tail,
  };
}
