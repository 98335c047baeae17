// Shared by the Prisma wrapper scripts.
//
// Prisma's CLIs try to download native engines at start-up; these machines cannot reach
// that host. Pointing the engine variables at an existing file stops the attempt (Prisma 7
// `generate` only checks the file exists; the 6.19 migration CLI runs its bundled WASM
// engine in `engine: "js"` mode). Variables already set by the user win.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
const workDir = join(packageRoot, "node_modules", ".thaw-prisma");

export function ensureDummyEngine(baseEnv) {
  const env = { ...baseEnv, PRISMA_HIDE_UPDATE_MESSAGE: "1", CHECKPOINT_DISABLE: "1" };
  const dummy = join(workDir, "engine-not-needed");
  if (!existsSync(dummy)) {
    mkdirSync(workDir, { recursive: true });
    writeFileSync(dummy, "placeholder: the JS/WASM engines are used instead\n");
  }
  env.PRISMA_SCHEMA_ENGINE_BINARY ??= dummy;
  env.PRISMA_QUERY_ENGINE_LIBRARY ??= dummy;
  return env;
}

/**
 * Prisma 7 schemas carry no datasource url (it lives in prisma.config.ts); the 6.19
 * migration CLI insists on one. Write a copy of `schemaPath` with the url added and
 * return its path.
 */
export function schemaForMigrationCli(schemaPath, name = "schema.prisma") {
  const text = readFileSync(schemaPath, "utf8");
  const withUrl = text.replace(
    /(datasource\s+db\s*\{[^}]*provider\s*=\s*"postgresql")/,
    '$1\n  url      = env("DATABASE_URL")',
  );
  if (withUrl === text) throw new Error(`${schemaPath}: no postgresql datasource block found`);
  mkdirSync(workDir, { recursive: true });
  const out = join(workDir, name);
  writeFileSync(out, withUrl);
  return out;
}

/** Runs the Prisma 6.19 migration CLI (package alias `prisma-migrate-cli`). */
export function runMigrationCli(args, { env = process.env, capture = false } = {}) {
  const cli = join(packageRoot, "node_modules", "prisma-migrate-cli", "build", "index.js");
  const result = spawnSync(
    process.execPath,
    [cli, ...args, "--config", join(packageRoot, "prisma", "migrate.config.ts")],
    {
      cwd: packageRoot,
      env: ensureDummyEngine(env),
      stdio: capture ? ["ignore", "pipe", "pipe"] : "inherit",
      encoding: "utf8",
    },
  );
  return result;
}

/**
 * The SQL that builds `schemaPath`'s datamodel from an empty database, as Prisma would
 * write it (used by create-migration and by the schema-drift test).
 */
export function sqlForDatamodel(schemaPath, env = process.env) {
  const target = schemaForMigrationCli(schemaPath, "datamodel-target.prisma");
  schemaForMigrationCli(join(packageRoot, "prisma", "schema.prisma"));
  const result = runMigrationCli(
    ["migrate", "diff", "--from-empty", "--to-schema-datamodel", target, "--script"],
    { env, capture: true },
  );
  if (result.status !== 0) throw new Error(`prisma migrate diff failed: ${result.stderr}`);
  return result.stdout;
}
