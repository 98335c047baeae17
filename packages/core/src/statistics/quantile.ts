/**
 * The one quantile definition of the project: the REST API, the dashboard, the charts and
 * the benches all report through it, so a p50 means the same figure everywhere.
 *
 * Linear interpolation between the two nearest ranks (Hyndman & Fan type 7): PostgreSQL's
 * percentile_cont, numpy's and R's default, d3's quantile. Unlike a nearest-rank figure it
 * moves continuously as samples arrive, and the p50 of an even count is the usual median.
 */
export function quantile(values: readonly number[], q: number): number | null {
  return quantiles(values, [q])[0]!;
}

/** Several quantiles of the same values (one sort): `quantiles(xs, [0.5, 0.99])`. */
export function quantiles(values: readonly number[], qs: readonly number[]): (number | null)[] {
  for (const q of qs)
    if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile: q must be within [0, 1], got ${q}`);
  if (values.length === 0) return qs.map(() => null);
  const sorted = [...values].sort((a, b) => a - b);
  return qs.map((q) => {
    const rank = q * (sorted.length - 1);
    const low = Math.floor(rank);
    const lower = sorted[low]!;
    const upper = sorted[Math.ceil(rank)]!;
    return lower + (upper - lower) * (rank - low);
  });
}
