import { z } from "zod";
import { Phase, StartPath } from "../vocabulary/index.ts";
import type { ColdStartSample } from "./cold-start-sample.ts";
import { quantile } from "../statistics/index.ts";

export const PhaseQuantiles = z.object({
  path: StartPath,
  phase: Phase,
  /** Succeeded starts of this path that measured this phase. */
  samples: z.number(),
  p50Seconds: z.number(),
  p95Seconds: z.number(),
});
export type PhaseQuantiles = z.infer<typeof PhaseQuantiles>;

/**
 * p50 and p95 of each phase's seconds per start path, over succeeded starts only (a failed
 * start's last phase was cut short). Rows in path order, then phase order.
 */
export function phaseQuantilesByPath(starts: readonly ColdStartSample[]): PhaseQuantiles[] {
  const byCell = new Map<string, number[]>();
  for (const start of starts) {
    if (start.status !== "succeeded") continue;
    const perPhase = new Map<Phase, number>();
    for (const p of start.phases)
      if (p.seconds !== null) perPhase.set(p.phase, (perPhase.get(p.phase) ?? 0) + p.seconds);
    for (const [phase, seconds] of perPhase) {
      const key = `${start.path}:${phase}`;
      const cell = byCell.get(key) ?? [];
      cell.push(seconds);
      byCell.set(key, cell);
    }
  }
  const rows: PhaseQuantiles[] = [];
  for (const path of StartPath.options)
    for (const phase of Phase.options) {
      const values = byCell.get(`${path}:${phase}`);
      if (!values) continue;
      rows.push({
        path,
        phase,
        samples: values.length,
        p50Seconds: quantile(values, 0.5)!,
        p95Seconds: quantile(values, 0.95)!,
      });
    }
  return rows;
}
