// Simulated time: a phase of `seconds` simulated seconds takes seconds / timeFactor of wall
// time. Reported durations are always the simulated ones; only the waiting is accelerated.
// Plain timers: a thousand hosts replaying phases are a thousand pending timeouts, no loop.

export class SimClock {
  constructor(readonly timeFactor: number) {
    if (!(timeFactor >= 1)) throw new Error(`time factor must be >= 1, got ${timeFactor}`);
  }

  /** Waits `seconds` of simulated time; rejects with the signal's reason when aborted. */
  sleep(seconds: number, signal?: AbortSignal): Promise<void> {
    const ms = (seconds * 1000) / this.timeFactor;
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortReason(signal!));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Simulated seconds that correspond to the wall time since `sinceMs` (performance.now()). */
  simulatedSince(sinceMs: number): number {
    return ((performance.now() - sinceMs) / 1000) * this.timeFactor;
  }
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new Error(typeof reason === "string" ? reason : "aborted");
}
