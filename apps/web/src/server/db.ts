import { createDbClient, openPooledConnections, type DbClient } from "@thaw/db";
import { env } from "../env.ts";
import { log } from "./logger.ts";

// One Prisma client per server process. Kept on globalThis so that `next dev` module
// reloads do not open a new pool on every edit.
const holder = globalThis as typeof globalThis & { __thawWebDb?: DbClient };

export function getDb(): DbClient {
  // A request waits at most 2 s for a connection (Prisma's transaction maxWait, and the
  // direct path's acquire timeout) and is then a 503 to retry: never an unbounded queue.
  if (!holder.__thawWebDb) {
    holder.__thawWebDb = createDbClient({
      url: env().DATABASE_URL,
      maxConnections: 10,
      minConnections: KEPT_CONNECTIONS,
      acquireTimeoutMs: 2_000,
    });
    // In the background: a Postgres that is down makes requests answer 503 until it is back
    // (the pool opens connections then), never a request that waits on this. Here, not in
    // instrumentation.ts: Next bundles that file apart, with its own copy of @thaw/db, whose
    // client the routes' copy would not know.
    openPooledConnections(holder.__thawWebDb).catch((error: Error) =>
      log().warn({ err: error.message }, "could not open the kept database connections"),
    );
  }
  return holder.__thawWebDb;
}

/**
 * Connections the server keeps open from its first request on: a scale request is three to five
 * statements, and an autoscaler's burst after a quiet spell should not also pay for opening
 * connections (bench:warm-handover's 3 → 25 events/s step had 2 of its 3 runs' slowest
 * events in its first two seconds).
 */
const KEPT_CONNECTIONS = 4;

/** Closes the pool (tests, shutdown); the next getDb() opens a new one. */
export async function closeDb(): Promise<void> {
  const db = holder.__thawWebDb;
  holder.__thawWebDb = undefined;
  await db?.$disconnect();
}
