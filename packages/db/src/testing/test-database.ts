import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { createDbClient, type DbClient } from "../client.ts";
import { requireDatabaseUrl } from "../env.ts";

// Each integration test file gets its own database, cloned from a template that has every
// migration applied (`CREATE DATABASE … TEMPLATE`, ~100 ms) — the pattern of trigger.dev's
// test helpers without containers. The template's name carries a hash of the migrations,
// so changing a migration builds a new template and stale ones are never reused.

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const migrationsDir = join(packageRoot, "prisma", "migrations");

function migrationsHash(): string {
  const hash = createHash("sha256");
  for (const dir of readdirSync(migrationsDir).sort()) {
    if (dir.endsWith(".toml")) continue;
    hash.update(dir).update(readFileSync(join(migrationsDir, dir, "migration.sql")));
  }
  return hash.digest("hex").slice(0, 12);
}

/** URL of the same server with another database name. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: withDatabase(requireDatabaseUrl(), "postgres"),
  });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export function templateDatabaseName(): string {
  return `thaw_template_${migrationsHash()}`;
}

/** Applies the migrations to a database with the real migration CLI. */
export function migrateDatabase(url: string): void {
  const result = spawnSync(process.execPath, [join(packageRoot, "scripts", "migrate-deploy.mjs")], {
    env: { ...process.env, DATABASE_URL: url },
    encoding: "utf8",
  });
  if (result.status !== 0)
    throw new Error(`migrate deploy failed:\n${result.stdout}\n${result.stderr}`);
}

/**
 * Makes sure the migrated template exists (run once per test run, from Vitest's
 * globalSetup). Built under a temporary name and renamed, so a crash never leaves a
 * half-migrated template behind.
 */
export async function ensureTemplateDatabase(): Promise<string> {
  const name = templateDatabaseName();
  const exists = await withAdmin(
    async (c) =>
      (await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1,
  );
  if (exists) return name;
  const building = `${name}_building_${randomBytes(3).toString("hex")}`;
  await withAdmin((c) => c.query(`CREATE DATABASE "${building}"`));
  migrateDatabase(withDatabase(requireDatabaseUrl(), building));
  await withAdmin(async (c) => {
    try {
      await c.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
    } catch (error) {
      // Another run finished the same template first: use theirs.
      await c.query(`DROP DATABASE IF EXISTS "${building}"`);
      if (!(error instanceof Error && /already exists/.test(error.message))) throw error;
    }
  });
  return name;
}

export interface TestDatabase {
  url: string;
  name: string;
  db: DbClient;
  drop(): Promise<void>;
}

/** A fresh, migrated, empty database of its own for one test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = await ensureTemplateDatabase();
  const name = `thaw_test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  await withAdmin((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  const url = withDatabase(requireDatabaseUrl(), name);
  const db = createDbClient({ url, maxConnections: 5 });
  return {
    url,
    name,
    db,
    async drop() {
      await db.$disconnect();
      await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}

/** Runs SQL as the admin connection (for tests that inspect the catalog). */
export function adminQuery<T extends pg.QueryResultRow>(
  sql: string,
  params: unknown[] = [],
): Promise<pg.QueryResult<T>> {
  return withAdmin((c) => c.query<T>(sql, params));
}
