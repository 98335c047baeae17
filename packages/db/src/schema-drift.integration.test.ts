import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { migratedSchemaPath, withoutBanner } from "../scripts/migrated-schema.mjs";
import { packageRoot, sqlForDatamodel } from "../scripts/prisma-offline.mjs";
import {
  createTestDatabase,
  ensureTemplateDatabase,
  withDatabase,
  type TestDatabase,
} from "./testing/index.ts";
import { requireDatabaseUrl } from "./env.ts";

// Fails when prisma/schema.prisma and prisma/migrations disagree: the database the
// migrations build and the database Prisma would build from the schema must dump to the
// same DDL.

function pgDump(url: string): string {
  const candidates = [
    "pg_dump",
    ...readdirSync("/usr/lib/postgresql")
      .sort()
      .reverse()
      .map((v) => `/usr/lib/postgresql/${v}/bin/pg_dump`),
  ];
  const bin = candidates.find((c) => c === "pg_dump" || existsSync(c)) ?? "pg_dump";
  const out = execFileSync(
    bin,
    ["--schema-only", "--no-owner", "--no-privileges", "--exclude-table=_prisma_migrations", url],
    { encoding: "utf8" },
  );
  return out
    .split("\n")
    .filter(
      (line) =>
        line.trim() !== "" &&
        !line.startsWith("--") &&
        !line.startsWith("SET ") &&
        !line.startsWith("SELECT pg_catalog.set_config") &&
        !line.startsWith("\\") &&
        !line.startsWith("COMMENT ON SCHEMA public"),
    )
    .join("\n");
}

describe("schema and migrations", () => {
  let fromSchema: TestDatabase | undefined;
  afterAll(async () => {
    await fromSchema?.drop();
  });

  it("the migrations build exactly the database that schema.prisma describes", async () => {
    const template = await ensureTemplateDatabase();
    const migratedDump = pgDump(withDatabase(requireDatabaseUrl(), template));

    fromSchema = await createTestDatabase();
    const client = new pg.Client({ connectionString: fromSchema.url });
    await client.connect();
    try {
      await client.query("DROP SCHEMA public CASCADE; CREATE SCHEMA public;");
      await client.query(sqlForDatamodel(join(packageRoot, "prisma", "schema.prisma")));
      // Functions and triggers (which a datamodel cannot hold), as the migrations made them.
      await client.query(readFileSync(join(packageRoot, "prisma", "beyond-datamodel.sql"), "utf8"));
    } finally {
      await client.end();
    }
    const schemaDump = pgDump(fromSchema.url);

    expect(schemaDump.length).toBeGreaterThan(1000);
    expect(
      migratedDump,
      "schema.prisma changed without a migration: run `pnpm --filter @thaw/db migration:create <name>`",
    ).toBe(schemaDump);
  });

  it("migrated-schema.prisma records the datamodel of the last migration, below its banner", () => {
    const schema = readFileSync(join(packageRoot, "prisma", "schema.prisma"), "utf8");
    const migrated = withoutBanner(readFileSync(migratedSchemaPath, "utf8"));
    expect(
      migrated,
      "migrated-schema.prisma is generated: create migrations with `pnpm --filter @thaw/db migration:create <name>`, or record a hand-written one with `pnpm --filter @thaw/db migration:record`",
    ).toBe(schema);
  });
});
