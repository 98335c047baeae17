/**
 * The q-quantile (0 ≤ q ≤ 1) of the values, interpolated linearly between the two nearest
 * ranks (Hyndman & Fan type 7, PostgreSQL's percentile_cont); null for no values.
 */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile: q must be within [0, 1], got ${q}`);
  const sorted = [...values].sort((a, b) => a - b);
  const rank = q * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const lower = sorted[low]!;
  const upper = sorted[high]!;
  return lower + (upper - lower) * (rank - low);
}
