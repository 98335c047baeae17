import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/prisma/client.ts";

export type DbClient = PrismaClient;
/** The client inside `db.$transaction(async (tx) => …)`. */
export type DbTransaction = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];
/** Either the client or a transaction: use cases accept both so callers can compose them. */
export type Db = DbClient | DbTransaction;

export interface CreateDbClientOptions {
  /** postgresql:// URL. */
  url: string;
  /** Pool size per process; keep small — several processes share one Postgres. */
  maxConnections?: number;
}

/**
 * Creates a Prisma client over node-postgres. No native query engine is involved, so this
 * works wherever `pg` can reach the database.
 */
export function createDbClient({ url, maxConnections = 10 }: CreateDbClientOptions): DbClient {
  const adapter = new PrismaPg({ connectionString: url, max: maxConnections });
  return new PrismaClient({ adapter });
}
