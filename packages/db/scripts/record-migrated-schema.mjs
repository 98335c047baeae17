// Records schema.prisma as the datamodel the migrations build (prisma/migrated-schema.prisma),
// after a migration written by hand. Usage: pnpm --filter @thaw/db migration:record
import { migratedSchemaPath, recordMigratedSchema } from "./migrated-schema.mjs";

recordMigratedSchema();
console.error(`wrote ${migratedSchemaPath}`);
