import { AGENT_ERRORS, type AgentErrorCode, type AgentErrorStatus } from "@thaw/protocol";

/**
 * Something the agent refuses or cannot do: a code of the protocol's table (AGENT_ERRORS),
 * which also gives the HTTP status, so the scheduler can act on it (409 `path_unsupported`:
 * choose another option; 503 `shutting_down`: choose another node). `field` names the
 * request field at fault when there is one.
 */
export class AgentError extends Error {
  override readonly name = "AgentError";
  readonly status: AgentErrorStatus;
  constructor(
    readonly code: AgentErrorCode,
    message: string,
    readonly field?: string,
    /** More for the error body's `details` (e.g. every schema issue). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.status = AGENT_ERRORS[code];
  }
}
