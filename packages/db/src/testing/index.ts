export {
  adminQuery,
  createTestDatabase,
  ensureTemplateDatabase,
  migrateDatabase,
  templateDatabaseName,
  withDatabase,
  type TestDatabase,
} from "./test-database.ts";
