/**
 * The one table from AppError codes to transport codes (ARCHITECTURE.md §7). tRPC's codes are
 * strings so that this package does not depend on @trpc/server.
 */
export const ERROR_CODE_TABLE = {
  BAD_REQUEST: { httpStatus: 400, trpcCode: "BAD_REQUEST" },
  UNAUTHENTICATED: { httpStatus: 401, trpcCode: "UNAUTHORIZED" },
  FORBIDDEN: { httpStatus: 403, trpcCode: "FORBIDDEN" },
  NOT_FOUND: { httpStatus: 404, trpcCode: "NOT_FOUND" },
  METHOD_NOT_ALLOWED: { httpStatus: 405, trpcCode: "METHOD_NOT_SUPPORTED" },
  CONFLICT: { httpStatus: 409, trpcCode: "CONFLICT" },
  LENGTH_REQUIRED: { httpStatus: 411, trpcCode: "BAD_REQUEST" },
  PAYLOAD_TOO_LARGE: { httpStatus: 413, trpcCode: "PAYLOAD_TOO_LARGE" },
  UNPROCESSABLE: { httpStatus: 422, trpcCode: "UNPROCESSABLE_CONTENT" },
  RATE_LIMITED: { httpStatus: 429, trpcCode: "TOO_MANY_REQUESTS" },
  UNAVAILABLE: { httpStatus: 503, trpcCode: "SERVICE_UNAVAILABLE" },
  INTERNAL: { httpStatus: 500, trpcCode: "INTERNAL_SERVER_ERROR" },
} as const;

export type AppErrorCode = keyof typeof ERROR_CODE_TABLE;
export type TrpcErrorCode = (typeof ERROR_CODE_TABLE)[AppErrorCode]["trpcCode"];

export function httpStatusOf(code: AppErrorCode): number {
  return ERROR_CODE_TABLE[code].httpStatus;
}

export function trpcCodeOf(code: AppErrorCode): TrpcErrorCode {
  return ERROR_CODE_TABLE[code].trpcCode;
}
