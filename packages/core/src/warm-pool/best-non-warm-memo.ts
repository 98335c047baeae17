// What a miss of an endpoint's warm pool costs — the predicted seconds of its best start that
// is not a handover — predicted at most once per `ttlMs` per endpoint in a process that tends
// many. The prediction reads the org's node shortlist, snapshots and history and runs the
// physics: on bench:warm-handover (500 endpoints, sweeps every 15 s) the shortlist alone was
// Postgres's costliest statement, run once per tending. The fleet it reads changes a node at
// a time, and the warm pool weighs the figure against an idle-time histogram of minutes to
// hours: a minute-old figure decides the same.

export interface BestNonWarm {
  /** The deployment it was predicted for: used only while the endpoint still runs it. */
  deploymentId: string;
  seconds: number | null;
}

export class BestNonWarmMemo {
  private readonly entries = new Map<string, BestNonWarm & { atMs: number }>();

  constructor(
    private readonly ttlMs = 60_000,
    private readonly nowMs: () => number = () => Date.now(),
    /** Past this many endpoints remembered, the stale ones are forgotten (then, if need be, all). */
    private readonly maxEntries = 100_000,
  ) {}

  /** The endpoint's prediction if it is younger than the TTL. */
  fresh(endpointId: string): BestNonWarm | undefined {
    const entry = this.entries.get(endpointId);
    if (!entry) return undefined;
    if (this.nowMs() - entry.atMs > this.ttlMs) {
      this.entries.delete(endpointId);
      return undefined;
    }
    return { deploymentId: entry.deploymentId, seconds: entry.seconds };
  }

  remember(endpointId: string, prediction: BestNonWarm): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(endpointId)) {
      const now = this.nowMs();
      for (const [id, entry] of this.entries)
        if (now - entry.atMs > this.ttlMs) this.entries.delete(id);
      if (this.entries.size >= this.maxEntries) this.entries.clear();
    }
    this.entries.set(endpointId, { ...prediction, atMs: this.nowMs() });
  }

  /** Forgets the endpoint's prediction (it no longer runs the deployment it was made for). */
  forget(endpointId: string): void {
    this.entries.delete(endpointId);
  }
}
