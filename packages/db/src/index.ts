export {
  createDbClient,
  type CreateDbClientOptions,
  type Db,
  type DbClient,
  type DbTransaction,
} from "./client.ts";
export * from "./generated/prisma/enums.ts";
export { Prisma } from "./generated/prisma/client.ts";
export type * from "./generated/prisma/models.ts";
