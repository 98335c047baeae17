// Writes a new migration from the difference between prisma/migrated-schema.prisma (the
// datamodel the existing migrations produce) and prisma/schema.prisma, then records the
// new datamodel. Usage: pnpm --filter @thaw/db migration:create <name>
//
// The offline migration CLI can only diff datamodels (not a live or shadow database), so
// the migrated datamodel is kept beside the migrations (migrated-schema.mjs); the
// schema-drift integration test proves it has not drifted from what the SQL really builds.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { migratedSchemaPath, recordMigratedSchema } from "./migrated-schema.mjs";
import { packageRoot, runMigrationCli, schemaForMigrationCli } from "./prisma-offline.mjs";

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error("usage: create-migration.mjs <name>   (lower-case letters, digits and _)");
  process.exit(2);
}
const prismaDir = join(packageRoot, "prisma");
const target = schemaForMigrationCli(join(prismaDir, "schema.prisma"), "target.prisma");
const from = existsSync(migratedSchemaPath)
  ? ["--from-schema-datamodel", schemaForMigrationCli(migratedSchemaPath, "from.prisma")]
  : ["--from-empty"];
// The CLI connects through its adapter even for a datamodel-only diff (nothing is changed).
if (!process.env.DATABASE_URL) {
  console.error("DATABASE_URL is not set: run `bash infra/dev/services.sh` first, or export one.");
  process.exit(2);
}
const env = process.env;
schemaForMigrationCli(join(prismaDir, "schema.prisma"));
const result = runMigrationCli(
  ["migrate", "diff", ...from, "--to-schema-datamodel", target, "--script"],
  { env, capture: true },
);
if (result.status !== 0) {
  process.stderr.write(result.stderr);
  process.exit(result.status ?? 1);
}
if (!/\b(CREATE|ALTER|DROP)\b/.test(result.stdout)) {
  console.error("schema.prisma matches the migrations: nothing to write.");
  process.exit(0);
}
const migrationsDir = join(prismaDir, "migrations");
const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
const dir = join(migrationsDir, `${stamp}_${name}`);
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, "migration.sql"), result.stdout);
if (!readdirSync(migrationsDir).includes("migration_lock.toml")) {
  writeFileSync(join(migrationsDir, "migration_lock.toml"), 'provider = "postgresql"\n');
}
recordMigratedSchema();
console.error(`wrote ${dir}/migration.sql`);
