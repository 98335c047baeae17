import type { AppErrorCode } from "./error-codes.ts";

export interface AppErrorDetails {
  /** Dotted path of the input field that failed, e.g. "body.maxReplicas". */
  field?: string;
  /** Machine-readable issues, e.g. zod's. */
  issues?: { path: string; message: string }[];
  [key: string]: unknown;
}

/**
 * The one error type use cases throw. Transports map `code` to an HTTP status or a tRPC
 * code through ERROR_CODE_TABLE; the message is written for the person who sent the
 * request and says what to do.
 */
export class AppError extends Error {
  readonly code: AppErrorCode;
  readonly details: AppErrorDetails | undefined;

  constructor(code: AppErrorCode, message: string, details?: AppErrorDetails) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.details = details;
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
