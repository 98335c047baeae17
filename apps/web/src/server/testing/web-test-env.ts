import { vi } from "vitest";

// The web app's environment for one integration test file, and the teardown of what its
// route modules open. Stub first, then import the route modules (env() is read once).

export { TEST_DEPLOYMENT } from "@thaw/core/testing";

/** The scheduler's public key the web tier answers joins with (no agent is called here). */
export const TEST_AGENT_CALL_PUBLIC_KEY =
  "MCowBQYDK2VwAyEAnXcAANsPB7C8cJmzrTEiFiW5aPEgySmtDHtbmwfmUfY=";

export function stubWebEnv(o: {
  databaseUrl: string;
  /** Redis under this BullMQ prefix; without it the web app runs without Redis. */
  queuePrefix?: string;
  extra?: Record<string, string>;
}): void {
  vi.stubEnv("DATABASE_URL", o.databaseUrl);
  if (o.queuePrefix) {
    vi.stubEnv("REDIS_URL", process.env.REDIS_URL ?? "");
    vi.stubEnv("THAW_QUEUE_PREFIX", o.queuePrefix);
  }
  vi.stubEnv("BETTER_AUTH_SECRET", "test-secret-that-is-at-least-32-characters");
  vi.stubEnv("THAW_AGENT_CALL_PUBLIC_KEY", TEST_AGENT_CALL_PUBLIC_KEY);
  vi.stubEnv("LOG_LEVEL", "silent");
  for (const [name, value] of Object.entries(o.extra ?? {})) vi.stubEnv(name, value);
}

/** Closes the database pool and the Redis connection the routes opened; restores the env. */
export async function closeWebTestResources(): Promise<void> {
  const { closeQueues } = await import("../queue-producer.ts");
  const { closeDb } = await import("../db.ts");
  await closeQueues();
  await closeDb();
  vi.unstubAllEnvs();
}
