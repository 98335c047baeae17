import { ingestTelemetryGroup, type TelemetryOutcome, type TelemetrySubmission } from "@thaw/core";
import { getDb } from "../db.ts";
import { groupCommit } from "./group-commit.ts";

// The telemetry route's path to the database: every agent's batch that arrives while earlier
// ones are being stored goes with the next group, in one transaction (group-commit.ts).
// Measured by bench:ingest.

/** Groups stored at once: each holds one of the process's 10 connections for a moment. */
const GROUPS_IN_FLIGHT = 2;
/** Events and outcomes per group: a few statements' worth of arrays, never a huge one. */
const MAX_ROWS_PER_GROUP = 4_000;

const holder = globalThis as typeof globalThis & {
  __thawTelemetryIngest?: (submission: TelemetrySubmission) => Promise<TelemetryOutcome>;
};

/** Stores one batch, grouped with whatever else is waiting; answers as if it went alone. */
export function ingestGrouped(submission: TelemetrySubmission): Promise<TelemetryOutcome> {
  holder.__thawTelemetryIngest ??= groupCommit({
    store: (submissions: TelemetrySubmission[]) =>
      ingestTelemetryGroup({ submissions, db: getDb() }),
    maxInFlight: GROUPS_IN_FLIGHT,
    maxGroupWeight: MAX_ROWS_PER_GROUP,
    weigh: ({ input }) =>
      Math.max(1, input.events.length + input.outcomes.length + (input.kernelCaches?.length ?? 0)),
  });
  return holder.__thawTelemetryIngest(submission);
}
