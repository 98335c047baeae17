import type { Phase, StartPath } from "../vocabulary/index.ts";

// One cold start as an OpenTelemetry trace, planned from what Postgres recorded (pure: the
// scheduler's exporter turns the plan into SDK spans). The tree:
//
//   thaw.cold_start                       the whole start: scale request (or placement) → ready
//   ├─ thaw.reconcile                     scale request recorded → replica created   (attempt 1)
//   ├─ thaw.place                         replica created → node and path committed  (attempt 1)
//   ├─ thaw.dispatch                      committed → the agent accepted the start
//   └─ thaw.agent_start                   the agent's work, one child per reported phase
//      ├─ pull / restore / load_weights …  with bytes, throughput and seconds
//
// Every span is timed by recorded timestamps, never by when the export runs. A sim host's
// phases run on a compressed clock (THAW_SIM_TIME_FACTOR), so their spans are laid end to end
// from the agent's start at their simulated seconds: the trace shows where the time would
// go on real hardware, and its root stretches to cover them.

export type TraceAttributes = Record<string, string | number | boolean>;

export interface PlannedSpan {
  /** Unique within the plan; `parent` refers to it. */
  key: string;
  parent: string | null;
  name: string;
  start: Date;
  end: Date;
  attributes: TraceAttributes;
  /** Set when the span's work failed: the span's status message. */
  error?: string;
}

export interface ColdStartTraceInput {
  coldStart: {
    id: string;
    endpointId: string;
    deploymentId: string;
    replicaId: string;
    nodeId: string | null;
    path: StartPath;
    locality: string;
    attempt: number;
    trigger: string;
    explored: boolean;
    status: string;
    error: string | null;
    failedPhase: Phase | null;
    predictedMeanSeconds: number | null;
    predictedP10Seconds: number | null;
    predictedP90Seconds: number | null;
    actualSeconds: number | null;
    requestedAt: Date;
    dispatchedAt: Date | null;
    readyAt: Date | null;
    finishedAt: Date | null;
  };
  node: { name: string; instanceType: string; gpuModel: string } | null;
  replicaCreatedAt: Date;
  /** When the scale change that made this replica was recorded (its ScaleEvent), if known. */
  scaleRequestedAt: Date | null;
  phases: readonly {
    phase: Phase;
    sequence: number;
    startedAt: Date;
    endedAt: Date | null;
    seconds: number | null;
    bytes: bigint | number | null;
    throughputBps: number | null;
    simulated: boolean;
  }[];
}

const later = (a: Date, b: Date) => (a.getTime() >= b.getTime() ? a : b);
const plus = (t: Date, seconds: number) => new Date(t.getTime() + seconds * 1000);

function definedOnly(values: Record<string, string | number | boolean | null | undefined>) {
  const out: TraceAttributes = {};
  for (const [key, value] of Object.entries(values))
    if (value !== null && value !== undefined) out[key] = value;
  return out;
}

/** The spans of one closed cold start, root first, each inside its parent's interval. */
export function coldStartTraceSpans(input: ColdStartTraceInput): PlannedSpan[] {
  const { coldStart: cs, node } = input;
  const failed = cs.status === "failed";
  const spans: PlannedSpan[] = [];

  // The agent's phases, in the order it reported them.
  const agentStart = cs.dispatchedAt ?? cs.requestedAt;
  let simulatedCursor = agentStart;
  const phaseSpans: PlannedSpan[] = [...input.phases]
    .sort((a, b) => a.sequence - b.sequence)
    .map((p) => {
      let start: Date;
      let end: Date;
      if (p.simulated) {
        start = simulatedCursor;
        end = plus(start, p.seconds ?? 0);
        simulatedCursor = end;
      } else {
        // The agent's clock, not ours: a phase it stamped before our dispatch time is skew.
        start = later(p.startedAt, agentStart);
        end = p.endedAt ?? plus(p.startedAt, p.seconds ?? 0);
      }
      const bytes = p.bytes === null ? null : Number(p.bytes);
      const seconds = p.seconds ?? (end.getTime() - start.getTime()) / 1000;
      return {
        key: `phase-${p.sequence}`,
        parent: "agent",
        name: p.phase,
        start,
        end: later(end, start),
        attributes: definedOnly({
          "thaw.phase": p.phase,
          "thaw.phase.seconds": seconds,
          "thaw.phase.bytes": bytes,
          "thaw.phase.throughput_bytes_per_second":
            p.throughputBps ?? (bytes !== null && seconds > 0 ? bytes / seconds : null),
          "thaw.simulated": p.simulated || null,
        }),
        ...(failed && cs.failedPhase === p.phase && cs.error ? { error: cs.error } : {}),
      };
    });

  const lastPhaseEnd = phaseSpans.reduce<Date | null>(
    (max, s) => (max === null ? s.end : later(max, s.end)),
    null,
  );
  const closedAt = cs.readyAt ?? cs.finishedAt ?? cs.dispatchedAt ?? cs.requestedAt;
  const agentEnd = lastPhaseEnd
    ? later(lastPhaseEnd, later(closedAt, agentStart))
    : later(closedAt, agentStart);

  // Attempt 1 covers the control plane's part from the scale request; a retry starts at its placement.
  const firstAttempt = cs.attempt === 1;
  const createdAt = input.replicaCreatedAt;
  const scaleAt =
    firstAttempt && input.scaleRequestedAt && input.scaleRequestedAt <= createdAt
      ? input.scaleRequestedAt
      : null;
  const rootStart = firstAttempt ? (scaleAt ?? createdAt) : cs.requestedAt;
  // (A replica row written after its start was committed would be clock skew: never start late.)
  const rootStartClamped = rootStart <= cs.requestedAt ? rootStart : cs.requestedAt;

  spans.push({
    key: "root",
    parent: null,
    name: "thaw.cold_start",
    start: rootStartClamped,
    end: agentEnd,
    attributes: definedOnly({
      "thaw.cold_start.id": cs.id,
      "thaw.endpoint.id": cs.endpointId,
      "thaw.deployment.id": cs.deploymentId,
      "thaw.replica.id": cs.replicaId,
      "thaw.node.id": cs.nodeId,
      "thaw.node.name": node?.name,
      "thaw.node.instance_type": node?.instanceType,
      "thaw.node.gpu_model": node?.gpuModel,
      "thaw.path": cs.path,
      "thaw.locality": cs.locality,
      "thaw.attempt": cs.attempt,
      "thaw.trigger": cs.trigger,
      "thaw.explored": cs.explored,
      "thaw.outcome": cs.status,
      "thaw.predicted.mean_seconds": cs.predictedMeanSeconds,
      "thaw.predicted.p10_seconds": cs.predictedP10Seconds,
      "thaw.predicted.p90_seconds": cs.predictedP90Seconds,
      "thaw.actual_seconds": cs.actualSeconds,
      "thaw.failed_phase": cs.failedPhase,
    }),
    ...(failed ? { error: cs.error ?? "cold start failed" } : {}),
  });
  if (scaleAt)
    spans.push({
      key: "reconcile",
      parent: "root",
      name: "thaw.reconcile",
      start: scaleAt,
      end: createdAt,
      attributes: {},
    });
  if (firstAttempt && createdAt <= cs.requestedAt)
    spans.push({
      key: "place",
      parent: "root",
      name: "thaw.place",
      start: createdAt,
      end: cs.requestedAt,
      attributes: definedOnly({ "thaw.path": cs.path, "thaw.locality": cs.locality }),
    });
  if (cs.dispatchedAt)
    spans.push({
      key: "dispatch",
      parent: "root",
      name: "thaw.dispatch",
      start: cs.requestedAt,
      end: later(cs.dispatchedAt, cs.requestedAt),
      attributes: definedOnly({ "thaw.node.name": node?.name }),
    });
  spans.push({
    key: "agent",
    parent: "root",
    name: "thaw.agent_start",
    start: agentStart,
    end: agentEnd,
    attributes: definedOnly({ "thaw.node.name": node?.name, "thaw.path": cs.path }),
    ...(failed ? { error: cs.error ?? "cold start failed" } : {}),
  });
  spans.push(...phaseSpans);
  return spans;
}
