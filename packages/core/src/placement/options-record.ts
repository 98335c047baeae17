import type { StartOptionChoice } from "../scheduling/index.ts";

/** Feasible options kept per cold start: the contenders, not a 5,000-node dump. */
export const RECORDED_OPTIONS = 12;

/**
 * What a cold start stores about its decision (ColdStart.options): the best options with
 * their predictions and why each lost, and the infeasible ones summarised by reason.
 */
export function optionsRecord(choice: StartOptionChoice) {
  const feasible = choice.options.slice(0, RECORDED_OPTIONS).map((o) => ({
    nodeId: o.option.nodeId,
    nodeName: o.option.nodeName,
    path: o.option.path,
    locality: o.option.locality,
    ...(o.option.snapshotId ? { snapshotId: o.option.snapshotId } : {}),
    ...(o.option.warmReplicaId ? { warmReplicaId: o.option.warmReplicaId } : {}),
    chosen: o.chosen,
    predictedSeconds: round(o.prediction.meanSeconds),
    p90Seconds: round(o.prediction.p90Seconds),
    priorSeconds: round(o.prediction.priorSeconds),
    costSeconds: round(o.costSeconds),
    samples: o.prediction.samples,
    lostBecause: o.lostBecause?.text ?? null,
  }));
  const reasons = new Map<string, { path: string; reason: string; nodes: number }>();
  for (const entry of choice.infeasible) {
    const key = `${entry.path}|${entry.reason}`;
    const at = reasons.get(key) ?? { path: entry.path, reason: entry.reason, nodes: 0 };
    at.nodes++;
    reasons.set(key, at);
  }
  return {
    feasible,
    feasibleCount: choice.options.length,
    infeasible: [...reasons.values()],
  };
}

const round = (x: number) => Math.round(x * 100) / 100;

/** The chosen option as stored, for the steps after placement (dispatch, history). */
export function chosenOptionOf(
  options: unknown,
): { nodeId: string; path: string; snapshotId?: string; warmReplicaId?: string } | undefined {
  const feasible = (options as { feasible?: unknown } | null)?.feasible;
  if (!Array.isArray(feasible)) return undefined;
  return (feasible as { chosen?: boolean; nodeId: string; path: string }[]).find((o) => o.chosen);
}
