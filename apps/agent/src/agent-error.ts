/**
 * Something the agent refuses or cannot do, with the HTTP status and a stable code the
 * scheduler can act on (409 `path_unsupported`: choose another option; 503 `shutting_down`:
 * choose another node). `field` names the request field at fault when there is one.
 */
export class AgentError extends Error {
  override readonly name = "AgentError";
  constructor(
    readonly status: 400 | 401 | 404 | 405 | 409 | 413 | 415 | 503,
    readonly code: string,
    message: string,
    readonly field?: string,
    /** More for the error body's `details` (e.g. every schema issue). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}
