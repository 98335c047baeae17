/** Exponential backoff with "equal jitter": half the ceiling fixed, half random, capped. */
export interface BackoffPolicy {
  /** Ceiling of the first retry. */
  baseMs: number;
  /** No delay ever exceeds this. */
  maxMs: number;
}

/**
 * Delay before retry number `attempt` (1 = the first retry): the ceiling doubles per attempt
 * up to maxMs, and the delay is drawn from [ceiling/2, ceiling] so that a thousand hosts
 * that lost the control plane together do not come back in step.
 */
export function backoffDelayMs(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  return ceiling / 2 + random() * (ceiling / 2);
}
