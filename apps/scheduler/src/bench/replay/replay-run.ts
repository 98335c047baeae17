import { generateServeGenWorkload } from "./servegen-workload.ts";
import { parseFleet, parseTrace, withEndpointSpecs } from "./replay-input.ts";
import {
  allReplayPolicies,
  replay,
  type PolicyResult,
  type ReplayFleet,
  type TraceRequest,
} from "@thaw/core/replay";

// What one bench:replay process (or one of its workers) replays: the trace and fleet named by
// a plain description, so every worker builds the same inputs itself (deterministically)
// rather than being sent a million requests.

export type TraceSource =
  | { kind: "file"; path: string; format: "azure-llm" | "events"; endpoint?: string }
  | {
      kind: "servegen";
      dir: string;
      endpoints?: number;
      days?: number;
      targetRequests?: number;
      seed: number;
    };

export interface ReplayJob {
  trace: TraceSource;
  fleetPath: string;
  seed: number;
  /** Indexes into allReplayPolicies(). */
  policies: number[];
}

export function loadInputs(
  trace: TraceSource,
  fleetPath: string,
): {
  requests: TraceRequest[];
  fleet: ReplayFleet;
} {
  const fleet = parseFleet(fleetPath);
  if (trace.kind === "file")
    return { requests: parseTrace(trace.path, trace.format, trace.endpoint), fleet };
  const workload = generateServeGenWorkload({
    dir: trace.dir,
    seed: trace.seed,
    ...(trace.endpoints !== undefined ? { endpoints: trace.endpoints } : {}),
    ...(trace.days !== undefined ? { days: trace.days } : {}),
    ...(trace.targetRequests !== undefined ? { targetRequests: trace.targetRequests } : {}),
  });
  return { requests: workload.requests, fleet: withEndpointSpecs(fleet, workload.endpoints) };
}

/** Runs the job's policies one after another; yields each result as it is done. */
export function* runJob(
  job: ReplayJob,
): Generator<{ index: number; result: PolicyResult; seconds: number }> {
  const { requests, fleet } = loadInputs(job.trace, job.fleetPath);
  const policies = allReplayPolicies();
  for (const index of job.policies) {
    const t0 = performance.now();
    const result = replay({ requests, fleet, policy: policies[index]!, seed: job.seed });
    yield { index, result, seconds: (performance.now() - t0) / 1000 };
  }
}
