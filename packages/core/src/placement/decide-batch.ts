import {
  byCost,
  chooseStartOption,
  optionCostSeconds,
  DEFAULT_EXPLORATION,
  enumerateStartOptions,
  optionPredictor,
  type HistoryForOption,
  type InfeasibleOption,
  type Locality,
  type PeerSource,
  type PredictedStartOption,
  type SchedulingDeployment,
  type SchedulingEndpoint,
  type SchedulingNode,
  type SchedulingSnapshot,
  type StartOption,
  type StartOptionChoice,
} from "../scheduling/index.ts";
import { StartPath, type ColdStartTrigger } from "../vocabulary/index.ts";

// The decisions of one place job's batch (place-replica.ts), pure: each replica in turn
// against the state the earlier decisions left. Only the node a decision takes from changes
// between two decisions, so the options (node × path) and their predictions are built once
// per batch and, after each decision, rebuilt for that one node alone. Each replica's
// failed attempts are filtered on top. Every choice is the one a replica-by-replica
// enumerate → predict → choose would make (decide-batch.test.ts holds that reference).

export interface BatchReplica {
  replicaId: string;
  attempt: number;
  trigger: ColdStartTrigger;
  /** `${nodeId}|${path}` of this replica's failed or cancelled attempts: not tried again. */
  failed: ReadonlySet<string>;
}

export interface BatchDecision {
  replicaId: string;
  attempt: number;
  trigger: ColdStartTrigger;
  /** `chosen` is null when no option is feasible: the replica stays pending. */
  choice: StartOptionChoice;
}

export interface DecideBatchInput {
  endpoint: SchedulingEndpoint;
  deployment: SchedulingDeployment;
  /** Changed in place by each decision (`occupy`). */
  nodes: SchedulingNode[];
  snapshots: readonly SchedulingSnapshot[];
  /**
   * Serving replicas a peer copy can come from. Held fixed through the batch: the copies this
   * batch starts count against a source from the next batch on.
   */
  peerSources?: readonly PeerSource[];
  history: (path: StartPath, locality: Locality) => HistoryForOption;
  replicas: readonly BatchReplica[];
  recentDecisions: number;
  recentExplorations: number;
  /** Uniform [0, 1) for Thompson exploration. */
  random: () => number;
}

export const FAILED_EARLIER = "failed earlier for this replica";

/** Decides for every replica in turn; each decision's `occupy` is applied before the next. */
export function decideBatch(input: DecideBatchInput): BatchDecision[] {
  const { endpoint, deployment, nodes, snapshots, history, random } = input;
  const predictOption = optionPredictor(deployment, snapshots, history);

  // Per node, in node order: its feasible options with predictions, and its infeasible ones.
  const feasibleOf: PredictedStartOption[][] = [];
  const infeasibleOf: InfeasibleOption[][] = [];
  const evaluate = (i: number) => {
    const node = nodes[i]!;
    const enumerated = enumerateStartOptions({
      endpoint,
      deployment,
      nodes: [node],
      snapshots,
      ...(input.peerSources ? { peerSources: input.peerSources } : {}),
    });
    const feasible = new Array<PredictedStartOption>(enumerated.feasible.length);
    for (let j = 0; j < feasible.length; j++) {
      const option = enumerated.feasible[j]!;
      feasible[j] = { option, prediction: predictOption(node, option) };
    }
    feasibleOf[i] = feasible;
    infeasibleOf[i] = enumerated.infeasible;
  };
  for (let i = 0; i < nodes.length; i++) evaluate(i);
  const indexOf = new Map(nodes.map((n, i) => [n.id, i]));

  // The feasible options in the order chooseStartOption sorts them to: by cost, and options of
  // equal cost in their enumeration order (node, then path), as its stable sort leaves them.
  // Input in that order is sorted in one pass; it is kept so by re-inserting only the
  // options of the node a decision changed.
  const { objective } = endpoint;
  const costOf = new Map<PredictedStartOption, number>();
  const nodeIndexOf = new Map<PredictedStartOption, number>();
  const inOrder = (a: PredictedStartOption, b: PredictedStartOption) =>
    byCost(
      { option: a.option, costSeconds: costOf.get(a)! },
      { option: b.option, costSeconds: costOf.get(b)! },
    ) ||
    nodeIndexOf.get(a)! - nodeIndexOf.get(b)! ||
    StartPath.options.indexOf(a.option.path) - StartPath.options.indexOf(b.option.path);
  const track = (i: number) => {
    for (const o of feasibleOf[i]!) {
      costOf.set(o, optionCostSeconds(o, objective));
      nodeIndexOf.set(o, i);
    }
  };
  for (let i = 0; i < nodes.length; i++) track(i);
  let feasible = feasibleOf.flat().sort(inOrder);
  let infeasible = infeasibleOf.flat();

  let decisions = input.recentDecisions;
  let explorations = input.recentExplorations;
  const out: BatchDecision[] = [];
  for (const replica of input.replicas) {
    let options = feasible;
    let rejected = infeasible;
    if (replica.failed.size > 0) {
      // A failed attempt's node × path is not tried again for this replica: the next-best
      // wins. Its entries among the infeasible ones come in enumeration order.
      options = [];
      const failedHere: PredictedStartOption[] = [];
      for (const o of feasible) {
        if (!replica.failed.has(`${o.option.nodeId}|${o.option.path}`)) options.push(o);
        else failedHere.push(o);
      }
      if (failedHere.length > 0) {
        failedHere.sort(
          (a, b) =>
            nodeIndexOf.get(a)! - nodeIndexOf.get(b)! ||
            StartPath.options.indexOf(a.option.path) - StartPath.options.indexOf(b.option.path),
        );
        rejected = infeasible.concat(
          failedHere.map((o) => ({ ...o.option, reason: FAILED_EARLIER })),
        );
      } else options = feasible;
    }
    const choice = chooseStartOption({
      options,
      infeasible: rejected,
      objective: endpoint.objective,
      // No request queue is visible to the scheduler yet: a scale from zero is treated as
      // latency-critical (requests are presumably waiting), so it is never explored.
      scaleFromZeroWithWaitingRequests: replica.trigger === "scale_from_zero",
      exploration: {
        ...DEFAULT_EXPLORATION,
        recentDecisions: decisions,
        recentExplorations: explorations,
      },
      random,
    });
    out.push({
      replicaId: replica.replicaId,
      attempt: replica.attempt,
      trigger: replica.trigger,
      choice,
    });
    if (!choice.chosen) continue;
    decisions++;
    if (choice.explored) explorations++;
    const i = indexOf.get(choice.chosen.option.nodeId)!;
    occupy(nodes[i]!, choice.chosen.option, endpoint.gpuCount);
    const before = feasibleOf[i]!;
    evaluate(i);
    track(i);
    feasible = feasible.filter((o) => !before.includes(o));
    for (const o of feasibleOf[i]!) feasible.splice(insertionPoint(feasible, o, inOrder), 0, o);
    infeasible = infeasibleOf.flat();
  }
  return out;
}

/** Where `item` goes in `sorted` (ascending by `compare`): after every element not above it. */
function insertionPoint<T>(sorted: readonly T[], item: T, compare: (a: T, b: T) => number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(sorted[mid]!, item) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** What a decision takes from a node, so that the next decision of the batch sees it. */
export function occupy(node: SchedulingNode, option: StartOption, gpus: number): void {
  if (option.path === "warm") {
    node.idleWarmReplicas = node.idleWarmReplicas.filter(
      (w) => w.replicaId !== option.warmReplicaId,
    );
  } else {
    // A woken engine is no longer asleep: the next decision cannot wake it again.
    if (option.path === "wake" && node.sleepingReplicas)
      node.sleepingReplicas = node.sleepingReplicas.filter(
        (s) => s.replicaId !== option.sleepingReplica?.replicaId,
      );
    node.freeGpus = Math.max(0, node.freeGpus - gpus);
    node.startsInFlight = node.startsInFlight + 1;
  }
}
