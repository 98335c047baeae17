// Desired replicas from load signals, after Knative's KPA (pkg/autoscaler/scaling): the
// observed concurrency (requests in flight + queued) averaged over a stable window (60 s)
// and a panic window (6 s), divided by the target concurrency per replica.
//
//   desiredStable = ceil(avg₆₀ / target),  desiredPanic = ceil(avg₆ / target)
//   panic starts when desiredPanic / max(1, current) ≥ 2 and lasts until a full stable window
//   passes without that ratio being reached again; while panicking the result is
//   max(desiredPanic, current): a burst is served at once and never scaled down mid-burst.
//
// Scale-to-zero only when minReplicas is 0 and the endpoint has seen no load for
// scaleToZeroIdleSeconds; until then an idle endpoint keeps one replica. Time is an input.

export interface ConcurrencySample {
  atSeconds: number;
  concurrency: number;
}

export interface AutoscalerState {
  /** Samples within the stable window, oldest first. */
  samples: ConcurrencySample[];
  panicStartedAtSeconds: number | null;
  /** Last time the ratio reached the panic threshold (panic lasts a stable window past it). */
  lastPanicTriggerAtSeconds: number | null;
  /** Last sample with concurrency > 0. */
  lastActiveAtSeconds: number | null;
}

export const INITIAL_AUTOSCALER_STATE: AutoscalerState = {
  samples: [],
  panicStartedAtSeconds: null,
  lastPanicTriggerAtSeconds: null,
  lastActiveAtSeconds: null,
};

export interface AutoscaleSettings {
  targetConcurrencyPerReplica: number;
  minReplicas: number;
  maxReplicas: number;
  scaleToZeroIdleSeconds: number;
  stableWindowSeconds: number;
  panicWindowSeconds: number;
  /** Knative's panic-threshold-percentage 200 %. */
  panicThreshold: number;
}

export const KPA_DEFAULTS = {
  stableWindowSeconds: 60,
  panicWindowSeconds: 6,
  panicThreshold: 2,
} as const;

export interface AutoscaleDecision {
  desiredReplicas: number;
  mode: "stable" | "panic";
  stableConcurrency: number;
  panicConcurrency: number;
  reason: string;
  state: AutoscalerState;
}

function averageSince(samples: readonly ConcurrencySample[], fromSeconds: number): number {
  const inWindow = samples.filter((s) => s.atSeconds > fromSeconds);
  if (inWindow.length === 0) return 0;
  return inWindow.reduce((sum, s) => sum + s.concurrency, 0) / inWindow.length;
}

export function autoscaleFromSignal(input: {
  nowSeconds: number;
  /** Requests in flight plus queued, across the endpoint's replicas, at nowSeconds. */
  observedConcurrency: number;
  currentReplicas: number;
  settings: AutoscaleSettings;
  state: AutoscalerState;
}): AutoscaleDecision {
  const { nowSeconds, settings } = input;
  const target = Math.max(settings.targetConcurrencyPerReplica, Number.MIN_VALUE);
  const minReplicas = Math.max(0, Math.floor(settings.minReplicas));
  const maxReplicas = Math.max(minReplicas, Math.floor(settings.maxReplicas));
  const current = Math.max(0, Math.floor(input.currentReplicas));
  const concurrency = Number.isFinite(input.observedConcurrency)
    ? Math.max(0, input.observedConcurrency)
    : 0;

  const samples = [
    ...input.state.samples.filter(
      (s) => s.atSeconds > nowSeconds - settings.stableWindowSeconds && s.atSeconds <= nowSeconds,
    ),
    { atSeconds: nowSeconds, concurrency },
  ];
  const stableConcurrency = averageSince(samples, nowSeconds - settings.stableWindowSeconds);
  const panicConcurrency = averageSince(samples, nowSeconds - settings.panicWindowSeconds);
  const desiredStable = Math.ceil(stableConcurrency / target);
  const desiredPanic = Math.ceil(panicConcurrency / target);

  const triggers = desiredPanic / Math.max(1, current) >= settings.panicThreshold;
  const lastPanicTriggerAtSeconds = triggers ? nowSeconds : input.state.lastPanicTriggerAtSeconds;
  const panicking =
    triggers ||
    (input.state.panicStartedAtSeconds !== null &&
      lastPanicTriggerAtSeconds !== null &&
      nowSeconds - lastPanicTriggerAtSeconds < settings.stableWindowSeconds);
  const panicStartedAtSeconds = panicking
    ? (input.state.panicStartedAtSeconds ?? nowSeconds)
    : null;
  const lastActiveAtSeconds = concurrency > 0 ? nowSeconds : input.state.lastActiveAtSeconds;

  let desired = panicking ? Math.max(desiredPanic, current) : desiredStable;
  let reason = panicking
    ? `panic: ${panicConcurrency.toFixed(1)} concurrent over ${settings.panicWindowSeconds} s wants ${desiredPanic}, never below ${current}`
    : `stable: ${stableConcurrency.toFixed(1)} concurrent over ${settings.stableWindowSeconds} s at ${target} per replica`;

  if (desired === 0 && minReplicas === 0) {
    const idleFor =
      lastActiveAtSeconds === null ? Number.POSITIVE_INFINITY : nowSeconds - lastActiveAtSeconds;
    if (idleFor < settings.scaleToZeroIdleSeconds && current > 0) {
      // Idle, but not for long enough: keep one replica to absorb the next request.
      desired = 1;
      reason = `idle ${idleFor.toFixed(0)} s < scale-to-zero after ${settings.scaleToZeroIdleSeconds} s: keep 1`;
    } else if (current > 0) {
      reason = `idle ${Number.isFinite(idleFor) ? idleFor.toFixed(0) : "∞"} s: scale to zero`;
    }
  }
  const bounded = Math.min(maxReplicas, Math.max(minReplicas, desired));
  if (bounded !== desired) reason += `; bounded to [${minReplicas}, ${maxReplicas}]`;

  return {
    desiredReplicas: bounded,
    mode: panicking ? "panic" : "stable",
    stableConcurrency,
    panicConcurrency,
    reason,
    state: { samples, panicStartedAtSeconds, lastPanicTriggerAtSeconds, lastActiveAtSeconds },
  };
}
