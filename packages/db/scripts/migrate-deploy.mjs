// Applies pending migrations to DATABASE_URL (`prisma migrate deploy`, offline-capable).
import { join } from "node:path";
import { packageRoot, runMigrationCli, schemaForMigrationCli } from "./prisma-offline.mjs";

if (!process.env.DATABASE_URL) {
  console.error(
    "DATABASE_URL is not set. Example: postgresql://postgres:postgres@127.0.0.1:5432/thaw",
  );
  process.exit(2);
}
schemaForMigrationCli(join(packageRoot, "prisma", "schema.prisma"));
const result = runMigrationCli(["migrate", "deploy"]);
process.exit(result.status ?? 1);
