import type { TraceRequest } from "../replay/index.ts";

// An endpoint's recorded load (one LoadSample per minute: the most requests in flight + queued
// that a signal reported, and the signals' sum) as the request arrivals the replay engine takes.
//
// Signals report concurrency, not requests, so the minute is rebuilt from its two figures:
// at the minute's start `max` requests arrive, and each holds a replica slot for an equal share
// of the minute's slot-seconds (mean × 60 s, mean = sum / signals). That keeps both figures the
// live scheduler acts on exact:
// - the peak: `max` requests in flight at once, which is what the autoscaler's panic window
//   sizes for, so the replay starts the replicas the peak needed;
// - the work: Σ held seconds = mean × 60, so busy (and so idle) GPU time is what it was.
// A minute without a sample had no signal, which a gateway sends while requests are in flight:
// no load. And it is fast: one request per unit of peak concurrency per minute (a week of an
// endpoint at a peak of 10 is ~100 k requests), never one per real request, whose count the
// signals do not know. When even that is too many (`maxRequests`), each replayed request
// stands for `unit` concurrent ones and a replica's slots shrink by the same factor: `unit`
// divides the endpoint's concurrency, so a replica holds exactly as much load as it does live.

export interface LoadMinute {
  /** Start of the minute. */
  minute: Date;
  maxConcurrency: number;
  sumConcurrency: number;
  signals: number;
}

/**
 * Replayed requests a what-if allows before coarsening: its 24 replays cost ~35 µs a request
 * together (bench:what-if: 33 k requests in 1.2 s), so 60 k keep a week within 2 s — a week at
 * a steady peak of 6, or a working-hours tide peaking near 30.
 */
export const MAX_REPLAY_REQUESTS = 60_000;

/** A replica's slots in the replay at most (the replay's EndpointSpec bound). */
const MAX_SLOTS = 256;

export interface ReplayLoad {
  requests: TraceRequest[];
  /** Each replayed request stands for this many concurrent ones (1: one each). */
  unit: number;
  /** The replica's slots in the replay: concurrency / unit. */
  slotsPerReplica: number;
}

/** The requests of one minute at `at` seconds, each standing for `unit` concurrent ones. */
function minuteRequests(
  sample: LoadMinute,
  at: number,
  endpoint: string,
  unit: number,
  out: TraceRequest[],
): void {
  if (sample.signals <= 0 || sample.maxConcurrency <= 0) return;
  const mean = Math.min(sample.sumConcurrency / sample.signals, sample.maxConcurrency);
  if (!(mean > 0)) return;
  const count = Math.ceil(sample.maxConcurrency / unit);
  const seconds = (mean * 60) / unit / count;
  for (let i = 0; i < count; i++) out.push({ at, endpoint, seconds });
}

/**
 * The samples (any order) as arrivals from `from` (seconds since it), for the endpoint named
 * `endpoint` in the replay. `concurrency` is the endpoint's requests per replica.
 */
export function loadToRequests(input: {
  samples: readonly LoadMinute[];
  from: Date;
  endpoint: string;
  concurrency: number;
  maxRequests?: number;
}): ReplayLoad {
  const { from, endpoint, concurrency } = input;
  const samples = [...input.samples].sort((a, b) => a.minute.getTime() - b.minute.getTime());
  const budget = input.maxRequests ?? MAX_REPLAY_REQUESTS;
  // The smallest divisor of the concurrency that brings the requests within the budget (and a
  // replica's slots within the replay's 256).
  const unitFor = () => {
    for (let unit = 1; unit < concurrency; unit++) {
      if (concurrency % unit !== 0 || concurrency / unit > MAX_SLOTS) continue;
      let total = 0;
      for (const s of samples)
        if (s.maxConcurrency > 0) total += Math.ceil(s.maxConcurrency / unit);
      if (total <= budget) return unit;
    }
    return concurrency;
  };
  const unit = unitFor();
  const requests: TraceRequest[] = [];
  for (const sample of samples)
    minuteRequests(
      sample,
      (sample.minute.getTime() - from.getTime()) / 1000,
      endpoint,
      unit,
      requests,
    );
  return { requests, unit, slotsPerReplica: concurrency / unit };
}
