import type { TraceRequest } from "@thaw/core/replay";

// How many GPUs of each type a trace keeps busy or warm, minute by minute, if every endpoint
// holds just the replicas its concurrent requests need and keeps each for `keepAliveSeconds`
// after it was last needed — what a keep-alive policy with instant cold starts would hold.
// The replay counts a request that finds no free GPU as waiting for the rest of the trace, so
// a fleet is sized from these figures: cold starts only add to them (a starting replica holds
// its GPUs too), which is why a fleet needs headroom above the peak.

export interface DemandEndpoint {
  gpuType: string;
  gpus: number;
  /** Requests one replica serves at once. */
  concurrency: number;
  /**
   * How long a start holds the GPUs before the replica serves (default 0: instant starts).
   * A replica started for a request is held from its arrival through start, service and
   * keep-alive, so this lengthens each hold like the keep-alive does.
   */
  startSeconds?: number;
}

export interface GpuDemand {
  gpuType: string;
  peak: number;
  p999: number;
  p99: number;
  mean: number;
}

const BUCKET_SECONDS = 60;

export function gpuDemand(
  requests: readonly TraceRequest[],
  endpoints: Record<string, DemandEndpoint>,
  keepAliveSeconds: number,
): GpuDemand[] {
  const end = requests.reduce((last, r) => Math.max(last, r.at + r.seconds), 0);
  const longestStart = Object.values(endpoints).reduce(
    (m, e) => Math.max(m, e.startSeconds ?? 0),
    0,
  );
  const buckets = Math.ceil((end + longestStart + keepAliveSeconds) / BUCKET_SECONDS) + 1;
  const byEndpoint = new Map<string, TraceRequest[]>();
  for (const r of requests) {
    const list = byEndpoint.get(r.endpoint);
    if (list) list.push(r);
    else byEndpoint.set(r.endpoint, [r]);
  }
  const totals = new Map<string, Float64Array>();
  const needed = new Uint32Array(buckets);
  for (const [name, list] of byEndpoint) {
    const spec = endpoints[name];
    if (!spec) throw new Error(`no endpoint spec for '${name}'`);
    needed.fill(0);
    // Sweep starts and ends: the most requests in flight during each minute.
    const events: [number, number][] = [];
    for (const r of list) events.push([r.at, 1], [r.at + r.seconds, -1]);
    events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let inFlight = 0;
    for (const [t, delta] of events) {
      inFlight += delta;
      const b = Math.floor(t / BUCKET_SECONDS);
      const replicas = Math.ceil(inFlight / spec.concurrency);
      if (replicas > needed[b]!) needed[b] = replicas;
    }
    // A request spanning several minutes holds its replica through all of them.
    inFlight = 0;
    let e = 0;
    for (let b = 0; b < buckets; b++) {
      while (e < events.length && events[e]![0] < b * BUCKET_SECONDS) inFlight += events[e++]![1];
      const replicas = Math.ceil(inFlight / spec.concurrency);
      if (replicas > needed[b]!) needed[b] = replicas;
      if (e === events.length && inFlight === 0) break;
    }
    // Held: the most needed over the last start + keep-alive (sliding maximum, monotone deque).
    const holdBuckets = Math.ceil((keepAliveSeconds + (spec.startSeconds ?? 0)) / BUCKET_SECONDS);
    let total = totals.get(spec.gpuType);
    if (!total) totals.set(spec.gpuType, (total = new Float64Array(buckets)));
    const deque: number[] = [];
    for (let b = 0; b < buckets; b++) {
      while (deque.length > 0 && needed[deque.at(-1)!]! <= needed[b]!) deque.pop();
      deque.push(b);
      while (deque[0]! < b - holdBuckets) deque.shift();
      total[b] = total[b]! + needed[deque[0]!]! * spec.gpus;
    }
  }
  return [...totals].map(([gpuType, total]) => {
    const sorted = Float64Array.from(total).sort();
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    return {
      gpuType,
      peak: sorted.at(-1)!,
      p999: at(0.999),
      p99: at(0.99),
      mean: total.reduce((sum, x) => sum + x, 0) / total.length,
    };
  });
}
