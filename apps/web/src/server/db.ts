import { createDbClient, type DbClient } from "@thaw/db";
import { env } from "../env.ts";

// One Prisma client per server process. Kept on globalThis so that `next dev` module
// reloads do not open a new pool on every edit.
const holder = globalThis as typeof globalThis & { __thawWebDb?: DbClient };

export function getDb(): DbClient {
  holder.__thawWebDb ??= createDbClient({ url: env().DATABASE_URL, maxConnections: 10 });
  return holder.__thawWebDb;
}

/** Closes the pool (tests, shutdown); the next getDb() opens a new one. */
export async function closeDb(): Promise<void> {
  const db = holder.__thawWebDb;
  holder.__thawWebDb = undefined;
  await db?.$disconnect();
}
