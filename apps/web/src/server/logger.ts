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
  "request.headers.authorization",
  "request.headers.cookie",
  ...[
    "password",
    "passwordHash",
    "token",
    "joinToken",
    "invitationToken",
    "secret",
    "key",
    "apiKey",
    "credential",
    "nodeCredential",
    "staleCredential",
    "agentCallKey",
  ].flatMap((name) => [name, `*.${name}`]),
];

/** A logger with the web tier's redaction, writing to `destination` (stdout by default). */
export function createWebLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options = {
    name: "thaw-web",
    level,
    base: { service: "web" },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** The server's structured logger (JSON lines on stdout). */
export function log(): Logger {
  logger ??= createWebLogger(env().LOG_LEVEL);
  return logger;
}
