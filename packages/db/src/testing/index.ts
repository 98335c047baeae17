export {
  adminQuery,
  createTestDatabase,
  ensureTemplateDatabase,
  migrateDatabase,
  templateDatabaseName,
  withDatabase,
  type TestDatabase,
} from "./test-database.ts";
export { useTestDatabase } from "./use-test-database.ts";
