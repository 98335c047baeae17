// How well the predictor's intervals hold: the share of an endpoint's recent
// succeeded starts whose actual time-to-ready fell inside the p10–p90 interval predicted at
// placement. A calibrated predictor lands 80% inside; well below, its intervals are too
// narrow (it is overconfident); well above, too wide. One definition, for the dashboard and
// the REST status answer.

/** What the share should be, how far from it still counts as calibrated, and after how many starts. */
export const CALIBRATION_TARGET = { share: 0.8, tolerance: 0.05, minStarts: 20 } as const;

/** Recent starts the figure is computed over (the most recent first). */
export const CALIBRATION_STARTS = 200;

export interface CalibrationStart {
  status: string;
  actualSeconds: number | null;
  predictedP10Seconds: number | null;
  predictedP90Seconds: number | null;
}

export interface PredictionCalibration {
  /** Succeeded starts with a stored interval: what the share rests on. */
  starts: number;
  /** Of those, how many finished inside p10–p90, faster than p10, slower than p90. */
  inside: number;
  faster: number;
  slower: number;
  /** inside / starts; null with no starts. */
  insideShare: number | null;
  verdict: "no-starts" | "too-few-starts" | "calibrated" | "too-narrow" | "too-wide";
}

export function predictionCalibration(
  recent: readonly CalibrationStart[],
  target = CALIBRATION_TARGET,
): PredictionCalibration {
  let starts = 0;
  let faster = 0;
  let slower = 0;
  for (const s of recent) {
    if (s.status !== "succeeded" || s.actualSeconds === null) continue;
    if (s.predictedP10Seconds === null || s.predictedP90Seconds === null) continue;
    starts += 1;
    if (s.actualSeconds < s.predictedP10Seconds) faster += 1;
    else if (s.actualSeconds > s.predictedP90Seconds) slower += 1;
  }
  const inside = starts - faster - slower;
  const insideShare = starts === 0 ? null : inside / starts;
  const verdict =
    insideShare === null
      ? "no-starts"
      : starts < target.minStarts
        ? "too-few-starts"
        : insideShare < target.share - target.tolerance
          ? "too-narrow"
          : insideShare > target.share + target.tolerance
            ? "too-wide"
            : "calibrated";
  return { starts, inside, faster, slower, insideShare, verdict };
}
