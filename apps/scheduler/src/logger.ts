import { pino } from "pino";

/** Structured logs; anything that could hold a secret is redacted. */
export function createLogger(level: string) {
  return pino({
    name: "thaw-scheduler",
    level,
    redact: {
      paths: ["*.credential", "*.token", "*.joinToken", "*.password", "*.authorization", "*.url"],
      censor: "[redacted]",
    },
  });
}
export type Logger = ReturnType<typeof createLogger>;
