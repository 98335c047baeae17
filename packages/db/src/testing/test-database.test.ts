import { readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { schemaForMigrationCli } from "../../scripts/prisma-offline.mjs";
import { withDatabase } from "./test-database.ts";

describe("withDatabase", () => {
  it("swaps only the database name, keeping credentials and options", () => {
    expect(
      withDatabase("postgresql://u:p%40ss@127.0.0.1:55432/thaw?sslmode=disable", "thaw_test_1"),
    ).toBe("postgresql://u:p%40ss@127.0.0.1:55432/thaw_test_1?sslmode=disable");
  });
});

describe("schemaForMigrationCli", () => {
  it("adds the datasource url the 6.19 migration CLI requires and nothing else", () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-schema-"));
    const source = join(dir, "schema.prisma");
    writeFileSync(
      source,
      'datasource db {\n  provider = "postgresql"\n}\n\nmodel A {\n  id Int @id\n}\n',
    );
    const out = readFileSync(schemaForMigrationCli(source, "unit-test.prisma"), "utf8");
    expect(out).toBe(
      'datasource db {\n  provider = "postgresql"\n  url      = env("DATABASE_URL")\n}\n\nmodel A {\n  id Int @id\n}\n',
    );
  });

  it("refuses a schema without a postgresql datasource", () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-schema-"));
    const source = join(dir, "schema.prisma");
    writeFileSync(source, 'datasource db {\n  provider = "sqlite"\n}\n');
    expect(() => schemaForMigrationCli(source, "unit-test.prisma")).toThrow(
      /no postgresql datasource/,
    );
  });
});
