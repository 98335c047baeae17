import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { directSqlOver, type DirectSql, type SqlRows } from "./direct-sql.ts";
import { PrismaClient, type Prisma } from "./generated/prisma/client.ts";

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
  /**
   * How long directSql's statements wait for a pooled connection before DatabaseBusyError
   * (none: unbounded). A request handler sets it, as Prisma's transactions have their maxWait;
   * a worker, whose job waits anyway, need not.
   */
  acquireTimeoutMs?: number;
  /** How long an idle pooled connection is kept open (ms); IDLE_CONNECTION_KEPT_MS unless set. */
  idleTimeoutMs?: number;
  /**
   * Connections kept open however long idle (none unless set): a long-running server's pool
   * after openPooledConnections, so a burst after a quiet spell does not open them one
   * handshake at a time while it is already late.
   */
  minConnections?: number;
}

/**
 * Idle connections are kept minutes, not pg-pool's default 10 s. A new connection costs a TCP
 * handshake, SCRAM's PBKDF2 on both sides and, in production, TLS: milliseconds of CPU. The
 * pool hands out its most recently used connection first, so at a scale event every few
 * seconds only one connection stayed warm while a place batch uses three at once (its
 * transaction, the snapshots, the history), and each event opened the others again.
 */
export const IDLE_CONNECTION_KEPT_MS = 5 * 60_000;

/**
 * Creates a Prisma client over node-postgres. No native query engine is involved, so this
 * works wherever `pg` can reach the database.
 */
export function createDbClient({
  url,
  maxConnections = 10,
  acquireTimeoutMs,
  idleTimeoutMs = IDLE_CONNECTION_KEPT_MS,
  minConnections = 0,
}: CreateDbClientOptions): DbClient {
  // The pool is ours so the hot path can share it (direct-sql.ts); $disconnect still ends it.
  // Idle connections do not keep a process alive (a CLI that is done exits at once).
  const pool = new pg.Pool({
    connectionString: url,
    max: maxConnections,
    min: Math.min(minConnections, maxConnections),
    idleTimeoutMillis: idleTimeoutMs,
    allowExitOnIdle: true,
  });
  const db = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  clients.set(db, { sql: directSqlOver(pool, acquireTimeoutMs), pool });
  // Prisma hears the pool's idle-connection errors, and ends the pool on $disconnect, only
  // once it has connected: a process that so far used only directSql would crash on a
  // restarted server's dropped connection, and would keep its pool open after $disconnect.
  // The pool itself drops a connection that failed while idle; the next checkout opens another.
  pool.on("error", () => undefined);
  const disconnect = db.$disconnect.bind(db);
  db.$disconnect = async () => {
    await disconnect();
    if (!pool.ended) await pool.end();
  };
  return db;
}

/** What createDbClient made besides the Prisma client: its pool, and directSql over it. */
const clients = new WeakMap<DbClient, { sql: DirectSql; pool: pg.Pool }>();

/**
 * Opens the pool's kept connections (minConnections) now, all at once, rather than when load
 * first needs them. bench:warm-handover's step from 3 to 25 scale events/s opened six
 * connections in its first seconds (about 6 ms each on an idle host: TCP, SCRAM, a backend's
 * fork), and those seconds held the round's slowest events. Rejects when Postgres cannot be
 * reached; the connections opened so far stay in the pool.
 */
export async function openPooledConnections(db: DbClient): Promise<number> {
  const pool = clients.get(db)?.pool;
  if (!pool) throw new Error("openPooledConnections: this client was not made by createDbClient");
  const want = pool.options.min ?? 0;
  const opened = await Promise.allSettled(
    Array.from({ length: Math.max(0, want - pool.totalCount) }, () => pool.connect()),
  );
  for (const result of opened) if (result.status === "fulfilled") result.value.release();
  const failed = opened.find((result) => result.status === "rejected");
  if (failed) throw failed.reason;
  return pool.totalCount;
}

/** node-postgres on the client's own pool, for the few statements on the hot path. */
export function directSql(db: DbClient): DirectSql {
  const sql = clients.get(db)?.sql;
  if (!sql) throw new Error("directSql: this client was not made by createDbClient");
  return sql;
}

/** Prisma's raw-query path as SqlRows, for the loaders the hot path shares with others. */
export function prismaRows(db: Db): SqlRows {
  return <T>(statement: Prisma.Sql) => db.$queryRaw<T[]>(statement);
}
