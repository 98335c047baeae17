import pino, { type Logger } from "pino";
import { env } from "../env.ts";

let logger: Logger | undefined;

/**
 * Secrets never reach a log line, whatever object a caller logs: credentials in headers,
 * and any field named like a secret, at the top or one level down.
 */
export const REDACTED_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["set-cookie"]',
  "headers.authorization",
  "headers.cookie",
  ...["password", "token", "secret", "key", "apiKey", "credential", "passwordHash"].flatMap(
    (name) => [name, `*.${name}`],
  ),
];

/** The server's structured logger (JSON lines on stdout). */
export function log(): Logger {
  logger ??= pino({
    name: "thaw-web",
    level: env().LOG_LEVEL,
    base: { service: "web" },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
  });
  return logger;
}
