import { afterAll, beforeAll } from "vitest";
import { createTestDatabase, type TestDatabase } from "./test-database.ts";

/**
 * Gives the calling test file a database of its own (cloned from the migrated template)
 * and drops it after the file's last test. Read `.current` inside tests and hooks.
 */
export function useTestDatabase(): { readonly current: TestDatabase } {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  }, 120_000);
  afterAll(async () => {
    await database?.drop();
  });
  return {
    get current() {
      if (!database)
        throw new Error("useTestDatabase: the database exists only inside tests and hooks");
      return database;
    },
  };
}
