// Seeded draws from the distributions the ServeGen traces are fitted with (gamma and Weibull,
// in scipy's shape/scale parameterisation) and the few the workload generator needs besides.
// Every function takes the caller's uniform source — mulberry32 from the core — so a seed
// fixes every draw. The fitted shapes span 0.007 to 45,000, so the gamma draw works in logs:
// with shape 0.007 a draw is U^(1/0.007) ≈ U^143 times a Gamma(1.007) draw, which underflows
// a double whenever U < 0.0055, while the ratios between draws (all a window's rescaling
// uses) stay exact in logs.

/** A uniform draw in (0, 1]: `random()` is in [0, 1), and logs need a strictly positive value. */
function openUniform(random: () => number): number {
  return 1 - random();
}

/** Standard normal (Box–Muller, unclamped: the gamma sampler needs the tails). */
export function sampleStandardNormal(random: () => number): number {
  const u1 = openUniform(random);
  const u2 = random();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/**
 * log of a Gamma(shape, 1) draw. Marsaglia & Tsang (2000), "A simple method for generating
 * gamma variables", for shape ≥ 1; for shape < 1 their boosting step: Gamma(a) =
 * Gamma(a + 1) · U^(1/a), whose log is log Gamma(a + 1) + log(U)/a.
 */
export function sampleLogGamma(random: () => number, shape: number): number {
  if (!(shape > 0) || !Number.isFinite(shape))
    throw new RangeError(`gamma shape must be > 0, not ${shape}`);
  if (shape < 1) return sampleLogGamma(random, shape + 1) + Math.log(openUniform(random)) / shape;
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const x = sampleStandardNormal(random);
    const t = 1 + c * x;
    if (t <= 0) continue;
    const v = t * t * t;
    const u = openUniform(random);
    // The squeeze accepts ~98% of draws without a log; the log test is exact.
    if (u < 1 - 0.0331 * x * x * x * x || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v)))
      return Math.log(d) + Math.log(v);
  }
}

/** Gamma(shape, scale) as scipy's gamma(a=shape, scale=scale): mean shape·scale. */
export function sampleGamma(random: () => number, shape: number, scale: number): number {
  return scale * Math.exp(sampleLogGamma(random, shape));
}

/**
 * log of a Weibull(shape, scale) draw by the inverse CDF: F(x) = 1 − exp(−(x/λ)^k), so
 * x = λ·(−ln U)^(1/k) with U uniform in (0, 1].
 */
export function sampleLogWeibull(random: () => number, shape: number, scale: number): number {
  if (!(shape > 0) || !(scale > 0) || !Number.isFinite(shape) || !Number.isFinite(scale))
    throw new RangeError(`weibull shape and scale must be > 0, not ${shape}, ${scale}`);
  // −ln U is 0 only for U = 1 exactly; draw again rather than return log 0.
  for (;;) {
    const e = -Math.log(openUniform(random));
    if (e > 0) return Math.log(scale) + Math.log(e) / shape;
  }
}

/** Weibull(shape, scale) as scipy's weibull_min(c=shape, scale=scale). */
export function sampleWeibull(random: () => number, shape: number, scale: number): number {
  return Math.exp(sampleLogWeibull(random, shape, scale));
}

/** Exponential with the given mean. */
export function sampleExponential(random: () => number, mean: number): number {
  return -mean * Math.log(openUniform(random));
}
