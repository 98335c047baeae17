import { z } from "zod";
import { StartPath } from "../vocabulary/index.ts";
import type { ColdStartSample } from "./cold-start-sample.ts";

export const PredictedVsActual = z.object({
  id: z.string(),
  requestedAt: z.date(),
  path: StartPath,
  predictedSeconds: z.number(),
  actualSeconds: z.number(),
  /** actual − predicted: positive when the start was slower than predicted. */
  errorSeconds: z.number(),
});
export type PredictedVsActual = z.infer<typeof PredictedVsActual>;

/** Every succeeded start's prediction against its time to ready, oldest first. */
export function predictedVsActual(starts: readonly ColdStartSample[]): PredictedVsActual[] {
  return starts
    .filter(
      (s): s is ColdStartSample & { actualSeconds: number } =>
        s.status === "succeeded" && s.actualSeconds !== null,
    )
    .sort((a, b) => a.requestedAt.getTime() - b.requestedAt.getTime())
    .map((s) => ({
      id: s.id,
      requestedAt: s.requestedAt,
      path: s.path,
      predictedSeconds: s.predictedSeconds,
      actualSeconds: s.actualSeconds,
      errorSeconds: s.actualSeconds - s.predictedSeconds,
    }));
}
