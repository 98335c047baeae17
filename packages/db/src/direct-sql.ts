import { createHash } from "node:crypto";
import pg from "pg";
import type { Prisma } from "./generated/prisma/client.ts";

// The scheduler's hot path — placing a batch, reading and acknowledging dispatches — runs
// hundreds of statements a second. Through Prisma's raw-query layer each one serialised its
// parameters to JSON and parsed them back, compiled a query plan and captured a stack trace:
// about a fifth of a scheduler's CPU in V8 profiles of bench:placement. These few statements
// go to node-postgres directly, on the same pool Prisma uses (one connection budget per
// process), composed with Prisma.sql as everywhere else. Everything else stays on Prisma.

/** Rows of one statement. Loaders that the hot path shares with others take this. */
export type SqlRows = <T>(statement: Prisma.Sql) => Promise<T[]>;

export interface DirectSql {
  /** One statement on any pooled connection (outside a transaction). */
  rows: SqlRows;
  /** Rows changed by one statement. */
  execute(statement: Prisma.Sql): Promise<number>;
  /**
   * BEGIN … COMMIT on one pooled connection, ROLLBACK when `work` throws. Like Prisma's
   * interactive transactions, a transaction left idle for `idleTimeoutMs` is ended by the
   * server, so a wedged caller cannot hold its row locks forever.
   */
  transaction<T>(work: (tx: SqlTransaction) => Promise<T>, idleTimeoutMs?: number): Promise<T>;
}

export interface SqlTransaction {
  rows: SqlRows;
  execute(statement: Prisma.Sql): Promise<number>;
}

// Results decoded as Prisma decodes them: bigint as BigInt, and `timestamp` columns (which
// Prisma writes in UTC) as UTC instants rather than the process's local time.
const INT8 = 20;
const TIMESTAMP = 1114;
const parseTimestampAsUtc = (value: string) => new Date(`${value.replace(" ", "T")}Z`);
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => {
    if (oid === INT8) return BigInt;
    if (oid === TIMESTAMP) return parseTimestampAsUtc;
    return pg.types.getTypeParser(oid, format) as (value: string) => unknown;
  }) as typeof pg.types.getTypeParser,
};

// Dates sent as UTC wall time, as Prisma sends them to `timestamp` columns (node-postgres
// would send local time with an offset, which a `timestamp` comparison ignores).
const param = (value: unknown) => (value instanceof Date ? value.toISOString() : value);

// Named, so each connection parses and plans a statement once (Postgres's plan cache): the
// place batch's node shortlist took 2 ms to plan for 4 ms to run. Names follow the text; the
// hot path's statements are a dozen fixed shapes, so each connection keeps a dozen. (Behind
// a pooler in transaction mode this needs one that tracks prepared statements: PgBouncer
// 1.21 or later.)
const statementNames = new Map<string, string>();
function nameOf(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `thaw_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`;
    if (statementNames.size < 1_000) statementNames.set(text, name);
  }
  return name;
}

function queryOf(statement: Prisma.Sql): pg.QueryConfig {
  const text = statement.text;
  return { name: nameOf(text), text, values: statement.values.map(param), types };
}

/**
 * No pooled connection came free within the pool's acquire timeout: the database (or this
 * process's share of it) is overloaded, nothing was sent, and the same call may succeed in a
 * moment. Its code sits beside Prisma's own for the same case (P2024) in core's error table.
 */
export class DatabaseBusyError extends Error {
  readonly code = "THAW_DB_POOL_TIMEOUT";
  constructor(waitedMs: number) {
    super(`No database connection came free within ${waitedMs} ms.`);
    this.name = "DatabaseBusyError";
  }
}

/**
 * A pooled connection, or DatabaseBusyError after `timeoutMs` (none: wait as long as it takes).
 * node-postgres cannot withdraw a waiting request: one that is served after its caller gave up
 * is released at once.
 */
async function acquire(pool: pg.Pool, timeoutMs: number | undefined): Promise<pg.PoolClient> {
  if (timeoutMs === undefined) return pool.connect();
  const request = pool.connect();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<"expired">((resolve) => {
    timer = setTimeout(() => resolve("expired"), timeoutMs);
  });
  try {
    const first = await Promise.race([request, expired]);
    if (first !== "expired") return first;
  } finally {
    clearTimeout(timer);
  }
  request.then(
    (client) => client.release(),
    () => undefined,
  );
  throw new DatabaseBusyError(timeoutMs);
}

type Queryable = Pick<pg.PoolClient, "query">;

function runner(on: Queryable): SqlTransaction {
  return {
    rows: async <T>(statement: Prisma.Sql) => {
      const { rows }: { rows: unknown[] } = await on.query(queryOf(statement));
      return rows as T[];
    },
    execute: async (statement) => (await on.query(queryOf(statement))).rowCount ?? 0,
  };
}

export function directSqlOver(
  pool: pg.Pool,
  /** How long a statement or transaction waits for a pooled connection; none: unbounded. */
  acquireTimeoutMs?: number,
): DirectSql {
  // One statement on a connection of its own (the pool's own query() would wait unbounded).
  const once = async <T>(run: (client: SqlTransaction) => Promise<T>): Promise<T> => {
    const client = await acquire(pool, acquireTimeoutMs);
    let broken: Error | undefined;
    try {
      return await run(runner(client));
    } catch (error) {
      // A connection-level failure (not a statement's error) must not go back to the pool.
      if (error instanceof Error && !("severity" in error)) broken = error;
      throw error;
    } finally {
      client.release(broken);
    }
  };
  return {
    rows: (statement) => once((client) => client.rows(statement)),
    execute: (statement) => once((client) => client.execute(statement)),
    async transaction(work, idleTimeoutMs = 30_000) {
      const client = await acquire(pool, acquireTimeoutMs);
      let broken: unknown;
      // A connection the server ends mid-transaction (the idle timeout, a restart) emits
      // 'error' on the checked-out client: unheard, that would crash the process. The
      // statement in flight fails on its own; the connection is discarded on release.
      const onError = (error: Error) => {
        broken = error;
      };
      client.on("error", onError);
      try {
        // One round trip: the simple protocol takes both statements at once.
        await client.query(
          `BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${Math.round(idleTimeoutMs)}`,
        );
        const result = await work(runner(client));
        await client.query("COMMIT");
        return result;
      } catch (error) {
        try {
          await client.query("ROLLBACK");
        } catch (rollbackError) {
          // The connection itself failed: it must not go back to the pool.
          broken = rollbackError;
        }
        throw error;
      } finally {
        client.off("error", onError);
        client.release(broken instanceof Error ? broken : undefined);
      }
    },
  };
}
