/** A failure the CLI reports as one line and a non-zero exit, never as a stack trace. */
export class CliError extends Error {
  override name = "CliError";
  constructor(
    message: string,
    /** The input field the API named, e.g. `body.replicas`. */
    readonly field?: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
