// prisma/migrated-schema.prisma: the datamodel the migrations produce, kept because the
// offline migration CLI can only diff two datamodels (not a live or shadow database). It is a
// generated file: written here, with a banner saying so, and checked by
// src/schema-drift.integration.test.ts.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "./prisma-offline.mjs";

export const migratedSchemaPath = join(packageRoot, "prisma", "migrated-schema.prisma");

export const MIGRATED_SCHEMA_BANNER = `// GENERATED FILE, do not edit. Written by \`pnpm --filter @thaw/db migration:create <name>\`
// (a migration from schema.prisma) or \`pnpm --filter @thaw/db migration:record\` (after a
// migration written by hand): schema.prisma as the migrations in ./migrations build it,
// which the next migration:create diffs against. packages/db/README.md says why it exists.

`;

/** The file's text for a datamodel: the banner, then the datamodel as it is. */
export function withBanner(datamodel) {
  return MIGRATED_SCHEMA_BANNER + datamodel;
}

/** The datamodel a migrated-schema text records; null when the banner is missing. */
export function withoutBanner(text) {
  return text.startsWith(MIGRATED_SCHEMA_BANNER) ? text.slice(MIGRATED_SCHEMA_BANNER.length) : null;
}

/** Records schema.prisma as the migrations' datamodel. */
export function recordMigratedSchema() {
  const schema = readFileSync(join(packageRoot, "prisma", "schema.prisma"), "utf8");
  writeFileSync(migratedSchemaPath, withBanner(schema));
}
