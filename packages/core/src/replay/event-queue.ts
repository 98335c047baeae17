// A binary min-heap of timed events for the replay's virtual clock: keep-alives running out,
// scale-downs and pre-warms falling due. Ties keep insertion order, so a replay is the same
// on every run.

export class EventQueue<T> {
  private readonly times: number[] = [];
  private readonly orders: number[] = [];
  private readonly items: T[] = [];
  private inserted = 0;

  get size(): number {
    return this.items.length;
  }

  push(at: number, item: T): void {
    this.times.push(at);
    this.orders.push(this.inserted++);
    this.items.push(item);
    this.up(this.items.length - 1);
  }

  /** The earliest event's time (Infinity when empty). */
  peekTime(): number {
    return this.items.length === 0 ? Number.POSITIVE_INFINITY : this.times[0]!;
  }

  /** Removes and returns the earliest event. */
  pop(): { at: number; item: T } | undefined {
    if (this.items.length === 0) return undefined;
    const at = this.times[0]!;
    const item = this.items[0]!;
    const last = this.items.length - 1;
    this.swap(0, last);
    this.times.pop();
    this.orders.pop();
    this.items.pop();
    if (this.items.length > 0) this.down(0);
    return { at, item };
  }

  private less(a: number, b: number): boolean {
    const ta = this.times[a]!;
    const tb = this.times[b]!;
    return ta < tb || (ta === tb && this.orders[a]! < this.orders[b]!);
  }

  private swap(a: number, b: number): void {
    [this.times[a], this.times[b]] = [this.times[b]!, this.times[a]!];
    [this.orders[a], this.orders[b]] = [this.orders[b]!, this.orders[a]!];
    [this.items[a], this.items[b]] = [this.items[b]!, this.items[a]!];
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let smallest = i;
      if (l < n && this.less(l, smallest)) smallest = l;
      if (r < n && this.less(r, smallest)) smallest = r;
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }
}
