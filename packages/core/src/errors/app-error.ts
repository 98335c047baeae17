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

/**
 * Prisma's codes for a database that gave no connection (P2024) or no transaction (P2028:
 * "Unable to start a transaction in the given time", or one that outlived its timeout) in
 * time, and @thaw/db's DatabaseBusyError for the same on its direct path: an overloaded
 * database, which the next attempt may well find free.
 */
const DATABASE_BUSY_CODES = new Set(["P2024", "P2028", "THAW_DB_POOL_TIMEOUT"]);

/**
 * The answer to a request the database was too busy for: 503 with a second's Retry-After,
 * never a 500 — nothing was written (the transaction never started, or rolled back), and the
 * same request is right to send again.
 */
export function databaseBusyError(error: unknown): AppError | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !DATABASE_BUSY_CODES.has(code)) return null;
  return new AppError(
    "UNAVAILABLE",
    "The database is too busy to take this request now; nothing was changed. Retry in a second.",
    { retryAfterSeconds: 1 },
  );
}
