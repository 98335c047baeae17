// A Prometheus label whose values come from data (endpoint ids) must stay bounded: every value
// is a time series in every scrape, kept for the retention period. The first `max` values seen
// keep their own series; the rest share one overflow value, so a tenant making endpoints in a
// loop costs the operator's Prometheus one series, not thousands. Per process: each scheduler
// replica admits its own first `max`, and the operator's queries sum over them.

export const OVERFLOW_LABEL_VALUE = "_other";

export class BoundedLabelValues {
  private readonly admitted = new Set<string>();

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 0) throw new Error("max must be a non-negative integer");
  }

  /** The value to use as the label: itself while there is room (or if already admitted), else the overflow value. */
  labelFor(value: string): string {
    if (this.admitted.has(value)) return value;
    if (this.admitted.size >= this.max) return OVERFLOW_LABEL_VALUE;
    this.admitted.add(value);
    return value;
  }

  get size(): number {
    return this.admitted.size;
  }
}
