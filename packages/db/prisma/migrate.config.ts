// Configuration for the migration CLI only: Prisma 6.19 in JS-engine mode, installed as
// the alias `prisma-migrate-cli`. Prisma 7's own `migrate` spawns a native schema engine
// that must be downloaded; 6.19's bundled WASM schema engine, driven through
// @prisma/adapter-pg, applies the same SQL migrations with nothing downloaded.
// Anywhere engines can be fetched, plain `prisma migrate deploy` (Prisma 7 with
// prisma.config.ts) applies these migrations unchanged.
import { join } from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import { defineConfig } from "prisma-migrate-cli/config";

// The wrapper scripts run with the package root as working directory.
const root = process.cwd();

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  // A copy of prisma/schema.prisma with the datasource url the 6.19 CLI requires.
  schema: join(root, "node_modules", ".thaw-prisma", "schema.prisma"),
  migrations: { path: join(root, "prisma", "migrations") },
  // eslint-disable-next-line @typescript-eslint/require-await
  adapter: async () => {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error("DATABASE_URL is not set: migrations need a database to apply to.");
    return wholeScripts(new PrismaPg({ connectionString: url }));
  },
});

/**
 * adapter-pg's executeScript splits a migration at every ";" and sends the pieces one by one,
 * which breaks any statement with a semicolon inside it (a PL/pgSQL function's body). The
 * native engine sends the script whole; so does this: one simple-protocol query, which
 * PostgreSQL parses (dollar quotes included) and runs as one implicit transaction.
 */
function wholeScripts(factory: PrismaPg): PrismaPg {
  const connect = factory.connect.bind(factory);
  factory.connect = async () => {
    const adapter = await connect();
    const driver = adapter.underlyingDriver() as { query(text: string): Promise<unknown> };
    const onError = (adapter as unknown as { onError(error: unknown): never }).onError.bind(
      adapter,
    );
    adapter.executeScript = async (script: string) => {
      try {
        await driver.query(script);
      } catch (error) {
        onError(error);
      }
    };
    return adapter;
  };
  return factory;
}
