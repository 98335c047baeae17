import { createDbClient, type DbClient } from "@thaw/db";
import { env } from "../env.ts";

// One Prisma client per server process. Kept on globalThis so that `next dev` module
// reloads do not open a new pool on every edit.
const holder = globalThis as typeof globalThis & { __thawWebDb?: DbClient };

export function getDb(): DbClient {
  // A request waits at most 2 s for a connection (Prisma's transaction maxWait, and the
  // direct path's acquire timeout) and is then a 503 to retry: never an unbounded queue.
  holder.__thawWebDb ??= createDbClient({
    url: env().DATABASE_URL,
    maxConnections: 10,
    acquireTimeoutMs: 2_000,
  });
  return holder.__thawWebDb;
}

/** Closes the pool (tests, shutdown); the next getDb() opens a new one. */
export async function closeDb(): Promise<void> {
  const db = holder.__thawWebDb;
  holder.__thawWebDb = undefined;
  await db?.$disconnect();
}
