// What a miss of an endpoint's warm pool costs — the predicted seconds of its best start that
// is not a handover — predicted at most once per `ttlMs` per endpoint in a process that tends
// many. The prediction reads the org's node shortlist, snapshots and history and runs the
// physics: on bench:warm-handover (500 endpoints, sweeps every 15 s) the shortlist alone was
// Postgres's costliest statement, run once per tending. The fleet it reads changes a node at
// a time, and the warm pool weighs the figure against an idle-time histogram of minutes to
// hours: a figure minutes old decides the same. Predicted once a minute, 2,510 endpoints
// cost two schedulers and Postgres about a core between them on bench:warm-handover (the
// shortlist ran 84 times a second): the scheduler keeps a figure 2.5–5 minutes, each its own
// lifetime, so that the first sweep's predictions do not all fall due in one later sweep.
// Each prediction is also shared through the endpoint's warm-pool row (shared-best-non-warm.ts),
// so that the other schedulers, and this one after a restart, do not make it again.

/** How long the scheduler keeps a prediction at most (each lives half to all of it). */
export const BEST_NON_WARM_TTL_MS = 5 * 60_000;

export interface BestNonWarm {
  /** The deployment it was predicted for: used only while the endpoint still runs it. */
  deploymentId: string;
  seconds: number | null;
}

export class BestNonWarmMemo {
  private readonly entries = new Map<string, BestNonWarm & { atMs: number; lifetimeMs: number }>();

  constructor(
    private readonly ttlMs = BEST_NON_WARM_TTL_MS,
    private readonly nowMs: () => number = () => Date.now(),
    /** Past this many endpoints remembered, the stale ones are forgotten (then, if need be, all). */
    private readonly maxEntries = 100_000,
    /** The share of the TTL one remembered prediction lives, in (0, 1]: the whole of it unless told. */
    private readonly lifetimeShare: () => number = () => 1,
  ) {}

  /** The endpoint's prediction if it is younger than its lifetime. */
  fresh(endpointId: string): BestNonWarm | undefined {
    const entry = this.entries.get(endpointId);
    if (!entry) return undefined;
    if (this.nowMs() - entry.atMs > entry.lifetimeMs) {
      this.entries.delete(endpointId);
      return undefined;
    }
    return { deploymentId: entry.deploymentId, seconds: entry.seconds };
  }

  /**
   * Keeps the prediction for its lifetime — `lifetimeMs` when given (one another scheduler
   * made and shared, for what is left of its own), else a share of the TTL — and returns it.
   */
  remember(endpointId: string, prediction: BestNonWarm, lifetimeMs?: number): number {
    if (this.entries.size >= this.maxEntries && !this.entries.has(endpointId)) {
      const now = this.nowMs();
      for (const [id, entry] of this.entries)
        if (now - entry.atMs > this.ttlMs) this.entries.delete(id);
      if (this.entries.size >= this.maxEntries) this.entries.clear();
    }
    const lifetime = Math.min(this.ttlMs, lifetimeMs ?? this.ttlMs * this.lifetimeShare());
    this.entries.set(endpointId, { ...prediction, atMs: this.nowMs(), lifetimeMs: lifetime });
    return lifetime;
  }

  /** Forgets the endpoint's prediction (it no longer runs the deployment it was made for). */
  forget(endpointId: string): void {
    this.entries.delete(endpointId);
  }
}
