import pino, { type Logger } from "pino";
import { env } from "../env.ts";

let logger: Logger | undefined;

/** The server's structured logger (JSON lines on stdout). */
export function log(): Logger {
  logger ??= pino({ name: "thaw-web", level: env().LOG_LEVEL, base: { service: "web" } });
  return logger;
}
