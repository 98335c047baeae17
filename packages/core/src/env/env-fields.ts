import { databaseUrlEnv } from "@thaw/db/database-url";
import { z } from "zod";

// The environment variables several processes read, declared once: every app's src/env.ts
// (web, scheduler, agent, CLI and the tools' cli-env.ts) builds its schema from these, and
// stays the only reader of process.env in its app. Zod only, so any of them can import it.

export { databaseUrlEnv };

/** REDIS_URL: BullMQ's queues and the limits shared between processes. */
export const redisUrlEnv = z
  .string({ error: "is not set (e.g. redis://127.0.0.1:6379)" })
  .regex(/^rediss?:\/\//, "must be a redis:// URL");

/** THAW_QUEUE_PREFIX: every BullMQ key's prefix, the same in web and scheduler (tests use their own). */
export const queuePrefixEnv = z.string().min(1).max(64).default("thaw");

/**
 * THAW_CREDENTIALS_KEY: seals the orgs' registry credentials (web writes and inspects with
 * them, the scheduler opens them for a start's pull): base64 of 32 random bytes, the same in
 * both. Unset: no credential can be stored, and starts pull anonymously.
 */
export const credentialsKeyEnv = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9+/]{43}=$/, "must be base64 of 32 random bytes (openssl rand -base64 32)")
  .optional();

/**
 * THAW_METRICS_TOKEN: the operator's bearer token for the web app's and the scheduler's
 * Prometheus endpoints (they show every tenant's load). Unset: both are off.
 */
export const metricsTokenEnv = z
  .string()
  .trim()
  .min(16, "must be at least 16 characters (openssl rand -hex 16)")
  .optional();

/**
 * OTEL_EXPORTER_OTLP_ENDPOINT (the OpenTelemetry standard variable): the OTLP/HTTP collector
 * cold starts and API calls are exported to as traces (`/v1/traces` is appended). Unset: none.
 */
export const otlpEndpointEnv = z.url({ protocol: /^https?$/ }).optional();

/** OTEL_EXPORTER_OTLP_HEADERS: `key=value,…` sent with every export (a backend's API key). */
export const otlpHeadersEnv = z
  .string()
  .regex(
    /^\s*[^=,\s]+=[^,]*(,\s*[^=,\s]+=[^,]*)*\s*$/,
    "must be key=value pairs separated by commas",
  )
  .optional();

/** THAW_ECR_ENDPOINT: an ECR API endpoint to trade ECR credentials at (moto in tests); unset: AWS's. */
export const ecrEndpointEnv = z.url().optional();

/** pino's levels; `silent` turns logging off (tests, benches). */
export const LogLevel = z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]);
export type LogLevel = z.infer<typeof LogLevel>;
export const DEFAULT_LOG_LEVEL: LogLevel = "info";
/** LOG_LEVEL. */
export const logLevelEnv = LogLevel.default(DEFAULT_LOG_LEVEL);

/**
 * The variables that are set: an exported-but-empty one (`REDIS_URL=` in an env file, or a
 * template's blank) counts as unset, so it takes its default or is reported missing rather
 * than failing its format.
 */
export function presentEnv(
  source: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(source).filter((entry): entry is [string, string] => !!entry[1]),
  );
}
