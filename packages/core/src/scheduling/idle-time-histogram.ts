// The warm pool's memory of an endpoint: idle times (from a scale-down to the next scale-up)
// in 1-minute bins up to 4 h, and the windows a policy derives from them.

export const HISTOGRAM_BIN_SECONDS = 60;
export const HISTOGRAM_BINS = 240;

export interface IdleTimeHistogram {
  /** HISTOGRAM_BINS counts; bin i holds idle times in [i, i+1) minutes. */
  bins: number[];
  /** Idle times of 4 h or more. */
  outOfBounds: number;
}

export function emptyIdleTimeHistogram(): IdleTimeHistogram {
  return { bins: new Array<number>(HISTOGRAM_BINS).fill(0), outOfBounds: 0 };
}

/** The histogram with one more idle time (returns a new histogram). */
export function recordIdleTime(
  histogram: IdleTimeHistogram,
  idleSeconds: number,
): IdleTimeHistogram {
  const bin = Math.floor(Math.max(0, idleSeconds) / HISTOGRAM_BIN_SECONDS);
  if (bin >= HISTOGRAM_BINS)
    return { bins: [...histogram.bins], outOfBounds: histogram.outOfBounds + 1 };
  const bins = [...histogram.bins];
  bins[bin] = (bins[bin] ?? 0) + 1;
  return { bins, outOfBounds: histogram.outOfBounds };
}

export interface KeepAliveWindows {
  policy: "histogram" | "fixed-keep-alive" | "expected-cost";
  preWarmSeconds: number;
  keepAliveSeconds: number;
  /** When, after going idle, to start re-warming (preWarm minus the time a start takes). */
  reWarmAtSeconds: number;
  missCostWeight: number;
}
