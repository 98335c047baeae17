import { z } from "zod";

// The one table of the agent's error codes: every 4xx/5xx an agent answers names one of
// these, with the status the table gives it. The agent types its errors against the table
// (apps/agent's AgentError takes a code, not a status), and the control plane shows a tenant
// a code only when it is in the table: anything else came from whatever listens at the
// node's address.

/** Each code of the agent's error answers, with the HTTP status it is answered with. */
export const AGENT_ERRORS = {
  // The request.
  /** The body is not JSON. */
  invalid_json: 400,
  /** A field fails the protocol's schema; `details.field` names it. */
  invalid_request: 400,
  /** Not a call the scheduler signed for this host's node (or /metrics without its token). */
  unauthorized: 401,
  /** The sim cloud's bearer token is missing or wrong. */
  unauthenticated: 401,
  /** No such route. */
  not_found: 404,
  /** The route takes other methods; the Allow header lists them. */
  method_not_allowed: 405,
  /** The body is over the agent's limit. */
  body_too_large: 413,
  /** The body is not application/json. */
  unsupported_media_type: 415,
  // What the host holds.
  /** No such replica on this host. */
  replica_not_found: 404,
  /** This cold start was accepted before with another path. */
  idempotency_conflict: 409,
  /** The replica already runs on this host. */
  replica_exists: 409,
  /** The replica is not running (still starting, or parked). */
  replica_not_running: 409,
  /** This host cannot serve the path at all (no stargz-snapshotter, no CRIU). */
  path_unsupported: 409,
  /** This host cannot serve the path for this start (the snapshot's GPU, driver or CUDA). */
  path_infeasible: 409,
  /** No parked replica to hand over. */
  warm_replica_missing: 409,
  /** The parked replica runs another deployment. */
  warm_replica_mismatch: 409,
  /** The wake path's sleeping replica is not asleep on this host. */
  sleeping_replica_missing: 409,
  /** The sleeping replica runs another deployment. */
  sleeping_replica_mismatch: 409,
  /** The parked replica holds other GPUs. */
  gpu_mismatch: 409,
  /** No such GPU on this host. */
  gpu_unavailable: 409,
  /** Another replica holds the GPU. */
  gpu_busy: 409,
  // The agent.
  /** The agent is shutting down: choose another node. */
  shutting_down: 503,
  /** The agent failed; its log says why. */
  internal: 500,
} as const satisfies Record<string, number>;

export type AgentErrorCode = keyof typeof AGENT_ERRORS;
export type AgentErrorStatus = (typeof AGENT_ERRORS)[AgentErrorCode];

/** Whether `code` is one of the agent protocol's error codes. */
export function isAgentErrorCode(code: string): code is AgentErrorCode {
  return Object.hasOwn(AGENT_ERRORS, code);
}

/**
 * Codes the scheduler's client gives a call that got no protocol answer: nothing came back
 * (`unreachable`), the certificate was not the pinned one, the address may not be called,
 * or a 2xx was not the protocol's answer. No agent answers these.
 */
export const AGENT_CLIENT_ERROR_CODES = [
  "unreachable",
  "certificate_mismatch",
  "agent_address_refused",
  "invalid_answer",
] as const;
export type AgentClientErrorCode = (typeof AGENT_CLIENT_ERROR_CODES)[number];

/** `{"error": {"code", "message", "details": {"field"}}}`: every 4xx/5xx answer of an agent. */
export const AgentErrorBody = z.object({
  error: z.object({
    /** A code of AGENT_ERRORS, when the answer is an agent's (read as text: it may not be). */
    code: z.string(),
    message: z.string(),
    details: z.looseObject({ field: z.string().optional() }).optional(),
  }),
});
export type AgentErrorBody = z.infer<typeof AgentErrorBody>;
