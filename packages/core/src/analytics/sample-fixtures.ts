import type { ColdStartStatus, Phase, StartPath } from "../vocabulary/index.ts";
import type { ColdStartSample } from "./cold-start-sample.ts";

// Test fixtures: a cold start sample from the fields a test cares about.

let counter = 0;

export function sampleStart(o: {
  at: number | Date;
  path?: StartPath;
  status?: ColdStartStatus;
  predicted?: number;
  actual?: number | null;
  phases?: [Phase, number | null][];
}): ColdStartSample {
  counter += 1;
  return {
    id: `start-${counter}`,
    requestedAt: o.at instanceof Date ? o.at : new Date(o.at),
    path: o.path ?? "pull",
    status: o.status ?? "succeeded",
    predictedSeconds: o.predicted ?? 10,
    actualSeconds:
      o.actual === undefined ? ((o.status ?? "succeeded") === "succeeded" ? 10 : null) : o.actual,
    phases: (o.phases ?? []).map(([phase, seconds]) => ({
      phase,
      seconds,
      bytes: null,
      throughputBps: null,
      attributes: {},
    })),
  };
}
