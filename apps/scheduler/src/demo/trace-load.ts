import type { TraceRequest } from "@thaw/core/replay";

/**
 * Requests in flight over a trace's virtual clock, for replaying it as load signals: a
 * request is in flight from its arrival until its service time has passed (a replica slot
 * is held that long). Queries must come in non-decreasing time order; each is amortised O(1)
 * over the trace.
 */
export function inFlightCounter(requests: readonly TraceRequest[]): (at: number) => number {
  const arrivals = [...requests].sort((a, b) => a.at - b.at);
  const ends: number[] = []; // a min-heap of the end times of requests that have arrived
  let next = 0;
  let last = -Infinity;
  return (at) => {
    if (at < last) throw new RangeError(`inFlightCounter: time went back from ${last} to ${at}`);
    last = at;
    while (next < arrivals.length && arrivals[next]!.at <= at) {
      const request = arrivals[next++]!;
      pushHeap(ends, request.at + request.seconds);
    }
    while (ends.length > 0 && ends[0]! <= at) popHeap(ends);
    return ends.length;
  };
}

function pushHeap(heap: number[], value: number): void {
  heap.push(value);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[parent]! <= heap[i]!) break;
    [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
    i = parent;
  }
}

function popHeap(heap: number[]): void {
  const lastValue = heap.pop()!;
  if (heap.length === 0) return;
  heap[0] = lastValue;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let smallest = i;
    if (l < heap.length && heap[l]! < heap[smallest]!) smallest = l;
    if (r < heap.length && heap[r]! < heap[smallest]!) smallest = r;
    if (smallest === i) return;
    [heap[smallest], heap[i]] = [heap[i]!, heap[smallest]!];
    i = smallest;
  }
}
