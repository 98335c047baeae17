// Vitest globalSetup for integration projects: build the migrated template once per run.
import { ensureTemplateDatabase } from "./test-database.ts";

export default async function setup(): Promise<void> {
  await ensureTemplateDatabase();
}
