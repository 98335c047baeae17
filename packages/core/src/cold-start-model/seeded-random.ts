// Deterministic randomness: the same seed gives the same cold start on every machine, so
// a benchmark run is reproducible and a test can pin a value.

/** mulberry32: a 32-bit state PRNG, small and well mixed enough for simulation noise. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal draw (Box-Muller), clamped to +-clampSigmas so a factor stays bounded. */
export function clampedStandardNormal(random: () => number, clampSigmas: number): number {
  const u1 = Math.max(random(), Number.MIN_VALUE);
  const u2 = random();
  const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  return Math.max(-clampSigmas, Math.min(clampSigmas, z));
}

/** Independent streams from one seed (noise vs failure draws must not shift each other). */
export function deriveSeed(seed: number, stream: number): number {
  return (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(stream + 1, 0x85ebca6b)) >>> 0;
}
