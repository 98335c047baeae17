// One read shared by everyone who asks within its lifetime: a scheduler tends thousands of an
// org's endpoints a sweep, and a figure about the whole org (its idle times, the GPUs its warm
// pools hold) read once per tending made each sweep quadratic in the org's endpoints. Kept as
// a promise, so the tendings that find it due together share one read, not each start its own;
// a failed read is not kept, so the next caller reads again.

export class TimedReads<T> {
  private readonly entries = new Map<string, { atMs: number; value: Promise<T> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly nowMs: () => number = () => Date.now(),
  ) {}

  get(key: string, read: () => Promise<T>): Promise<T> {
    const entry = this.entries.get(key);
    if (entry && this.nowMs() - entry.atMs <= this.ttlMs) return entry.value;
    const fresh = { atMs: this.nowMs(), value: read() };
    fresh.value.catch(() => {
      if (this.entries.get(key) === fresh) this.entries.delete(key);
    });
    this.entries.set(key, fresh);
    return fresh.value;
  }
}
