// A fluid model of HTTP range requests sharing one host: each request first waits one
// round trip, then streams at min(one stream's rate, the shared ceiling / streams in flight).
// Used for plain pulls (one request per layer), eStargz prefetch (many ranges, work
// stealing) and snapshot fetches. Bytes count as arrived as they stream (stargz caches a
// chunk as soon as it is read), so a cancelled request keeps what it already delivered.

export interface TransferJob {
  /** Caller's grouping (a layer index); arrival is tracked per group. */
  group: number;
  bytes: number;
  /**
   * Back-to-back requests one worker makes for these bytes (default 1): each pays a round
   * trip. Lets a caller hand over 200,000 small ranges as a few thousand jobs. Only a single
   * request can hit the per-request timeout, so batch only requests far below it.
   */
  requests?: number;
}

export interface TransferLimits {
  /** Requests in flight at once (connections, cache fds). */
  concurrency: number;
  /** One HTTP stream's throughput. */
  perStreamBps: number;
  /** Shared ceiling: the lowest of NIC, decompression cores, disk. */
  aggregateBps: number;
  /** Round trip before a request's first byte. */
  requestLatencySeconds: number;
  /** A request running longer is cancelled (its remaining bytes never arrive). */
  requestTimeoutSeconds?: number;
  /** Everything in flight is cancelled and the queue dropped at this time. */
  cutoffSeconds?: number;
}

export interface TransferOutcome {
  /** When the last request finished or was cancelled. */
  endSeconds: number;
  /** Every byte of every job arrived. */
  complete: boolean;
  arrivedBytesByGroup: number[];
  /** Cumulative arrived bytes per group at each event time (piecewise linear between). */
  timeline: { seconds: number; arrivedBytesByGroup: number[] }[];
}

const EPSILON = 1e-9;
/** Less than a byte left counts as done: float sums must not leave a request forever open. */
const BYTE_EPSILON = 1e-3;

interface ActiveRequest {
  group: number;
  bytes: number;
  arrived: number;
  startSeconds: number;
  firstByteSeconds: number;
  canTimeOut: boolean;
}

export function simulateParallelTransfer(
  jobs: TransferJob[],
  limits: TransferLimits,
): TransferOutcome {
  const groupCount = jobs.reduce((max, job) => Math.max(max, job.group + 1), 0);
  const arrived: number[] = new Array<number>(groupCount).fill(0);
  const timeline: TransferOutcome["timeline"] = [{ seconds: 0, arrivedBytesByGroup: [...arrived] }];
  const queue = jobs;
  const active: ActiveRequest[] = [];
  const concurrency = Math.max(1, limits.concurrency);
  let next = 0;
  let now = 0;
  let complete = true;

  const fill = () => {
    while (active.length < concurrency && next < queue.length) {
      const job = queue[next++]!;
      active.push({
        group: job.group,
        bytes: job.bytes,
        arrived: 0,
        startSeconds: now,
        firstByteSeconds: now + (job.requests ?? 1) * limits.requestLatencySeconds,
        canTimeOut: (job.requests ?? 1) === 1,
      });
    }
  };

  fill();
  while (active.length > 0) {
    const streaming = active.filter((request) => request.firstByteSeconds <= now + EPSILON);
    const rate =
      streaming.length > 0
        ? Math.min(limits.perStreamBps, limits.aggregateBps / streaming.length)
        : 0;
    let nextEvent = limits.cutoffSeconds ?? Number.POSITIVE_INFINITY;
    for (const request of active) {
      if (request.firstByteSeconds > now + EPSILON)
        nextEvent = Math.min(nextEvent, request.firstByteSeconds);
      else if (rate > 0)
        nextEvent = Math.min(nextEvent, now + (request.bytes - request.arrived) / rate);
      if (request.canTimeOut && limits.requestTimeoutSeconds !== undefined) {
        nextEvent = Math.min(nextEvent, request.startSeconds + limits.requestTimeoutSeconds);
      }
    }
    if (!Number.isFinite(nextEvent)) {
      // Nothing can move (a zero rate with no deadline): the transfer never completes.
      complete = false;
      break;
    }
    const step = Math.max(0, nextEvent - now);
    for (const request of streaming) {
      const delivered = Math.min(rate * step, request.bytes - request.arrived);
      request.arrived += delivered;
      arrived[request.group] = (arrived[request.group] ?? 0) + delivered;
    }
    now += step;
    timeline.push({ seconds: now, arrivedBytesByGroup: [...arrived] });

    if (limits.cutoffSeconds !== undefined && now >= limits.cutoffSeconds - EPSILON) {
      if (
        active.some((request) => request.arrived < request.bytes - BYTE_EPSILON) ||
        next < queue.length
      )
        complete = false;
      active.length = 0;
      break;
    }
    for (let index = active.length - 1; index >= 0; index--) {
      const request = active[index]!;
      const finished = request.arrived >= request.bytes - BYTE_EPSILON;
      const timedOut =
        request.canTimeOut &&
        limits.requestTimeoutSeconds !== undefined &&
        now >= request.startSeconds + limits.requestTimeoutSeconds - EPSILON;
      if (finished || timedOut) {
        if (!finished) complete = false;
        active.splice(index, 1);
      }
    }
    fill();
  }
  return { endSeconds: now, complete, arrivedBytesByGroup: arrived, timeline };
}

/** Bytes of the given groups arrived by `seconds` (linear between recorded events). */
export function arrivedBytesAt(
  outcome: TransferOutcome,
  groups: readonly number[],
  seconds: number,
): number {
  const sum = (point: TransferOutcome["timeline"][number]) =>
    groups.reduce((total, group) => total + (point.arrivedBytesByGroup[group] ?? 0), 0);
  const points = outcome.timeline;
  const last = points[points.length - 1];
  if (!last || seconds >= last.seconds) return last ? sum(last) : 0;
  let low = 0;
  let high = points.length - 1;
  while (high - low > 1) {
    const middle = (low + high) >> 1;
    if (points[middle]!.seconds <= seconds) low = middle;
    else high = middle;
  }
  const before = points[low]!;
  const after = points[high]!;
  const span = after.seconds - before.seconds;
  const share = span > 0 ? (seconds - before.seconds) / span : 1;
  return sum(before) + (sum(after) - sum(before)) * share;
}
