import type { ColdStartStatus, Phase, StartPath } from "../vocabulary/index.ts";
import type { HostCeilings } from "./bottleneck-hints.ts";

// What the analytics read of one cold start: plain values, loaded by the use cases and fed
// to the pure functions of this folder (the same shapes in unit tests).

export interface PhaseSample {
  phase: Phase;
  /** Null while the phase is still running. */
  seconds: number | null;
  bytes: number | null;
  throughputBps: number | null;
  attributes: Record<string, unknown>;
}

export interface ColdStartSample {
  id: string;
  requestedAt: Date;
  path: StartPath;
  status: ColdStartStatus;
  predictedSeconds: number;
  /** Time to ready; null until the start succeeded. */
  actualSeconds: number | null;
  phases: PhaseSample[];
  /** The node's figures; null when the start never reached a node or they were not loaded. */
  host?: HostCeilings | null;
}
