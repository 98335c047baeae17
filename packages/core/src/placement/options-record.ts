import type { StartOptionChoice } from "../scheduling/index.ts";

/** Feasible options kept per cold start: the contenders, not a 5,000-node dump. */
export const RECORDED_OPTIONS = 12;

/**
 * What a cold start stores about its decision (ColdStart.options): the best options with
 * their predictions and why each lost, and the infeasible ones summarised by reason.
 */
export function optionsRecord(choice: StartOptionChoice) {
  // Built, then the optional ids added, rather than with conditional spreads: this runs for
  // every cold start placed.
  const feasible = choice.options.slice(0, RECORDED_OPTIONS).map((o) => {
    const entry: RecordedOption = {
      nodeId: o.option.nodeId,
      nodeName: o.option.nodeName,
      path: o.option.path,
      locality: o.option.locality,
      chosen: o.chosen,
      predictedSeconds: round(o.prediction.meanSeconds),
      p90Seconds: round(o.prediction.p90Seconds),
      priorSeconds: round(o.prediction.priorSeconds),
      costSeconds: round(o.costSeconds),
      samples: o.prediction.samples,
      lostBecause: o.lostBecause?.text ?? null,
    };
    if (o.option.snapshotId) entry.snapshotId = o.option.snapshotId;
    if (o.option.stageWeights) entry.stageWeights = true;
    if (o.option.warmReplicaId) entry.warmReplicaId = o.option.warmReplicaId;
    if (o.option.sleepingReplica) entry.sleepingReplicaId = o.option.sleepingReplica.replicaId;
    if (o.option.peerSource) {
      entry.peerSourceReplicaId = o.option.peerSource.replicaId;
      entry.peerSourceNodeName = o.option.peerSource.nodeName;
    }
    if (o.option.kernelCache) entry.kernelCacheId = o.option.kernelCache.id;
    return entry;
  });
  // Infeasible options by path and reason, in order of first appearance (keyed without
  // building a string per entry: a large fleet has hundreds).
  const infeasible: { path: string; reason: string; nodes: number }[] = [];
  const byPath = new Map<string, Map<string, (typeof infeasible)[number]>>();
  for (const entry of choice.infeasible) {
    let byReason = byPath.get(entry.path);
    if (!byReason) {
      byReason = new Map<string, (typeof infeasible)[number]>();
      byPath.set(entry.path, byReason);
    }
    let at = byReason.get(entry.reason);
    if (!at) {
      at = { path: entry.path, reason: entry.reason, nodes: 0 };
      byReason.set(entry.reason, at);
      infeasible.push(at);
    }
    at.nodes++;
  }
  return { feasible, feasibleCount: choice.options.length, infeasible };
}

/** One feasible option as stored (ColdStart.options.feasible[]). */
interface RecordedOption {
  nodeId: string;
  nodeName: string;
  path: string;
  locality: string;
  snapshotId?: string;
  /** `restore`: the agent is asked to stage the weights apart. */
  stageWeights?: boolean;
  warmReplicaId?: string;
  sleepingReplicaId?: string;
  /**
   * `peer`: the serving replica the copy comes from, and its node; a level-2 `restore`: the
   * one that sends its weights.
   */
  peerSourceReplicaId?: string;
  peerSourceNodeName?: string;
  /** `pull` / `lazy`: the stored kernel cache fetched before compile. */
  kernelCacheId?: string;
  chosen: boolean;
  predictedSeconds: number;
  p90Seconds: number;
  priorSeconds: number;
  costSeconds: number;
  samples: number;
  lostBecause: string | null;
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
