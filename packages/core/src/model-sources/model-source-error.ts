import { AppError } from "../errors/index.ts";

// How sizing a model source fails. Nearly every failure is the source's (no such model, not
// readable, too slow, not a model), so it is UNPROCESSABLE (422) on the modelSource field, as
// parseInput reports a rule the schema states in words; `problem` lets a client (the deploy
// wizard) tell "add a token" from "give modelBytes" without reading the message. A Hub or S3
// that is down is 422 too (`unreachable`, "try again later"), as an unreachable registry is:
// the request is answered, nothing was written, and the message says what to do.

export type ModelSourceProblem =
  /** Not a model source the policy allows (source-policy.ts). */
  | "invalid"
  | "not-found"
  /** Gated or private: a credential is missing or cannot read it. */
  | "access-denied"
  | "timeout"
  /** The source could not be reached, or refused the address (not public). */
  | "unreachable"
  /** The source exists but gave no size (gs://, a server that hides Content-Length). */
  | "unsizable"
  /** Several models where one is needed (a repo of GGUF quantisations). */
  | "ambiguous"
  | "too-many-files"
  | "empty";

export const MODEL_SOURCE_FIELD = "modelSource";

export function modelSourceError(problem: ModelSourceProblem, message: string): AppError {
  return new AppError("UNPROCESSABLE", `${MODEL_SOURCE_FIELD}: ${message}`, {
    field: MODEL_SOURCE_FIELD,
    problem,
  });
}

/** How every "could not size it" message ends: the way out. */
export const GIVE_MODEL_BYTES = "give modelBytes yourself";
export const OR_GIVE_MODEL_BYTES = `or ${GIVE_MODEL_BYTES}`;

/**
 * One deadline for a whole sizing (a listing may take many pages), joined with the caller's
 * signal. `timedOut()` tells the deadline's abort (the source's fault: 422) from the
 * caller's (a cancelled request: rethrown as it came).
 */
export function sizingDeadline(
  timeoutMs: number,
  signal?: AbortSignal,
): { signal: AbortSignal; timedOut: () => boolean; remainingMs: () => number } {
  const deadline = AbortSignal.timeout(timeoutMs);
  const endsAt = Date.now() + timeoutMs;
  return {
    signal: signal ? AbortSignal.any([deadline, signal]) : deadline,
    timedOut: () => deadline.aborted && !signal?.aborted,
    remainingMs: () => Math.max(1, endsAt - Date.now()),
  };
}

export function timeoutError(what: string, timeoutMs: number): AppError {
  return modelSourceError(
    "timeout",
    `${what} did not answer within ${timeoutMs / 1000} s; try again later, ${OR_GIVE_MODEL_BYTES}`,
  );
}
