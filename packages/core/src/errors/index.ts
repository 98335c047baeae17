export { AppError, databaseBusyError, isAppError, type AppErrorDetails } from "./app-error.ts";
export {
  ERROR_CODE_TABLE,
  httpStatusOf,
  trpcCodeOf,
  type AppErrorCode,
  type TrpcErrorCode,
} from "./error-codes.ts";
export { parseInput } from "./parse-input.ts";
