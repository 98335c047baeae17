import { type DestinationStream, type Logger, pino } from "pino";

/** Keys that hold secrets wherever they appear (top level or one level down): never logged. */
export const REDACTED_PATHS = [
  "credential",
  "joinToken",
  "token",
  "authorization",
  "*.credential",
  "*.joinToken",
  "*.token",
  "*.authorization",
  "*.headers.authorization",
  // A start's registry credentials (issue 19), should a request ever be logged.
  "password",
  "registryAuth",
  "*.password",
  "*.registryAuth",
];

/** Structured JSON logs on stderr (stdout stays free for commands that print JSON). */
export function createLogger(
  level: string,
  destination: DestinationStream = pino.destination({ fd: 2, sync: true }),
): Logger {
  return pino(
    { name: "thaw-agent", level, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } },
    destination,
  );
}
