export {
  createDbClient,
  directSql,
  openPooledConnections,
  prismaRows,
  type CreateDbClientOptions,
  type Db,
  type DbClient,
  type DbTransaction,
} from "./client.ts";
export {
  DatabaseBusyError,
  type DirectSql,
  type SqlRows,
  type SqlTransaction,
} from "./direct-sql.ts";
export * from "./generated/prisma/enums.ts";
export { Prisma } from "./generated/prisma/client.ts";
export type * from "./generated/prisma/models.ts";
