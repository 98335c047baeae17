import type { ColdStartStatus, Phase, ReplicaState } from "../vocabulary/index.ts";

// Pure rules of telemetry ingest: what one phase event measured, and how a cold start and
// its replica move given what is stored. ingest-telemetry.ts loads the rows and persists.

/** Longest phase a report may claim (the protocol's bound on `seconds`). */
export const MAX_PHASE_SECONDS = 86_400;

export interface PhaseTiming {
  startedAt: Date;
  endedAt?: Date | undefined;
  seconds?: number | undefined;
  bytes?: number | undefined;
}

export type PhaseMeasures =
  | { ok: true; seconds: number | null; throughputBps: number | null }
  | { ok: false; field: "endedAt"; message: string };

/**
 * Duration and throughput of one phase event: `seconds` as reported, else endedAt −
 * startedAt; throughput = bytes / seconds when both are known and the phase took time.
 */
export function measurePhase(event: PhaseTiming): PhaseMeasures {
  let seconds = event.seconds ?? null;
  if (event.endedAt !== undefined) {
    const elapsed = (event.endedAt.getTime() - event.startedAt.getTime()) / 1000;
    if (!(elapsed >= 0))
      return { ok: false, field: "endedAt", message: "endedAt is before startedAt" };
    if (elapsed > MAX_PHASE_SECONDS)
      return {
        ok: false,
        field: "endedAt",
        message: `a phase lasts at most ${MAX_PHASE_SECONDS} seconds`,
      };
    seconds ??= elapsed;
  }
  const throughputBps =
    seconds !== null && seconds > 0 && event.bytes !== undefined ? event.bytes / seconds : null;
  return { ok: true, seconds, throughputBps };
}

export const TERMINAL_COLD_START_STATUSES: readonly ColdStartStatus[] = [
  "succeeded",
  "failed",
  "cancelled",
];

export interface ColdStartNow {
  status: ColdStartStatus;
  lastSequence: number;
}

/** What is stored for one cold start once this batch's events are in. */
export interface StoredPhases {
  count: number;
  maxSequence: number | null;
  /** Sum of the stored events' seconds. */
  secondsSum: number;
  /** When the first stored `ready` marker fired (its endedAt, else startedAt), if any. */
  readyAt: Date | null;
}

export interface OutcomeNow {
  status: "succeeded" | "failed";
  failedPhase?: Phase | undefined;
  error?: string | undefined;
  endedAt: Date;
}

export interface ColdStartChange {
  status?: ColdStartStatus;
  lastSequence?: number;
  readyAt?: Date;
  finishedAt?: Date;
  actualSeconds?: number | null;
  failedPhase?: Phase | null;
  error?: string | null;
}

/**
 * The next state of a cold start, derived from what is stored (level-triggered, so a
 * resent batch derives the same state and changes nothing), or null when nothing changes.
 *
 * - scheduled | dispatched → running once any phase event is stored;
 * - a stored `ready` marker, else a succeeded outcome → succeeded; else a failed outcome →
 *   failed (the stored marker is a measured fact and beats an outcome in the same batch);
 * - succeeded, failed and cancelled are final: later events are still stored (and
 *   lastSequence follows them) but no outcome or marker moves the status again.
 */
export function nextColdStart(
  now: ColdStartNow,
  phases: StoredPhases,
  outcome: OutcomeNow | undefined,
): ColdStartChange | null {
  let change: ColdStartChange = {};
  if (phases.maxSequence !== null && phases.maxSequence > now.lastSequence)
    change.lastSequence = phases.maxSequence;
  if (!TERMINAL_COLD_START_STATUSES.includes(now.status)) {
    const readyAt = phases.readyAt ?? (outcome?.status === "succeeded" ? outcome.endedAt : null);
    if (readyAt) {
      change = {
        ...change,
        status: "succeeded",
        readyAt,
        finishedAt: readyAt,
        actualSeconds: actualSecondsOf(phases),
      };
    } else if (outcome?.status === "failed") {
      change = {
        ...change,
        status: "failed",
        finishedAt: outcome.endedAt,
        failedPhase: outcome.failedPhase ?? null,
        error: outcome.error ?? null,
      };
    } else if (phases.count > 0 && (now.status === "scheduled" || now.status === "dispatched")) {
      change.status = "running";
    }
  }
  return Object.keys(change).length > 0 ? change : null;
}

/**
 * Time-to-ready of a succeeded start: the sum of its phases' seconds, not readyAt −
 * requestedAt. Every phase duration is measured on one clock (the agent's), whereas
 * requestedAt is stamped by the control plane — host clock skew would land straight in
 * the figure. The sum is also what the predictor models (a sum of per-phase priors, §5)
 * and keeps scheduler backlog and retries out of a per-path statistic; the `queue` phase
 * carries the control-plane wait when the agent reports it. Phases are sequential (§4:
 * the UI stacks them), so nothing is counted twice. No measured time → null, never 0:
 * history works in log space.
 */
export function actualSecondsOf(phases: StoredPhases): number | null {
  return phases.secondsSum > 0 ? phases.secondsSum : null;
}

const REPLICA_STATES_BECOMING_READY: readonly ReplicaState[] = ["placed", "starting"];
const REPLICA_STATES_THAT_CAN_FAIL: readonly ReplicaState[] = ["placed", "starting"];

/**
 * Where a replica goes when one of its cold starts closes, or null to leave it alone.
 * Only a replica still coming up moves: draining, stopped and failed are decisions already
 * taken (an operator, a scale-down, or an earlier failure), and a ready/warm replica is not
 * failed by a stale attempt's late report.
 */
export function nextReplicaState(
  coldStartStatus: ColdStartStatus,
  replica: ReplicaState,
): "ready" | "failed" | null {
  if (coldStartStatus === "succeeded" && REPLICA_STATES_BECOMING_READY.includes(replica))
    return "ready";
  if (coldStartStatus === "failed" && REPLICA_STATES_THAT_CAN_FAIL.includes(replica))
    return "failed";
  return null;
}
