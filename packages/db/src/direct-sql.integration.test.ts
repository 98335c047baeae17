import { describe, expect, it } from "vitest";
import { createDbClient, directSql, prismaRows } from "./client.ts";
import { DatabaseBusyError } from "./direct-sql.ts";
import { Prisma } from "./generated/prisma/client.ts";
import { seedDemo } from "./seed/seed-demo.ts";
import { useTestDatabase } from "./testing/index.ts";

// The hot path's statements bypass Prisma (direct-sql.ts). They must read and write exactly
// what Prisma reads and writes, and their transactions must be all-or-nothing.

// Off UTC, as a developer's laptop may be: node-postgres's own Date handling is local time,
// and on a UTC machine these tests could not tell the difference.
process.env.TZ = "America/New_York";
describe("direct SQL on Prisma's pool", () => {
  const testDb = useTestDatabase();

  it("decodes rows as Prisma does: bigint as BigInt, timestamps as the same instants", async () => {
    const db = testDb.current.db;
    const { orgId } = await seedDemo(db);
    const deployment = await db.deployment.findFirstOrThrow({ where: { orgId } });
    const statement = Prisma.sql`
      SELECT "modelBytes", "createdAt", "imageLayers", ARRAY[1, 2]::int[] AS ints,
        ARRAY['a', 'b']::text[] AS texts
      FROM "Deployment" WHERE id = ${deployment.id}::uuid`;
    const [direct] = await directSql(db).rows<Record<string, unknown>>(statement);
    const [viaPrisma] = await prismaRows(db)<Record<string, unknown>>(statement);
    expect(typeof direct!.modelBytes).toBe("bigint");
    expect(direct).toEqual(viaPrisma);
    expect(direct!.createdAt).toEqual(deployment.createdAt);
  });

  it("sends a Date parameter as the instant Prisma stored", async () => {
    const db = testDb.current.db;
    const { orgId } = await seedDemo(db);
    const deployment = await db.deployment.findFirstOrThrow({ where: { orgId } });
    const at = deployment.createdAt;
    const count = (op: Prisma.Sql) =>
      directSql(db).rows<{ n: number }>(Prisma.sql`
        SELECT count(*)::int AS n FROM "Deployment"
        WHERE id = ${deployment.id}::uuid AND "createdAt" ${op} ${at}`);
    expect(await count(Prisma.sql`=`)).toEqual([{ n: 1 }]);
    expect(await count(Prisma.sql`<`)).toEqual([{ n: 0 }]);
    expect(await count(Prisma.sql`>`)).toEqual([{ n: 0 }]);
  });

  it("commits a transaction's writes together, and rolls all of them back when it throws", async () => {
    const db = testDb.current.db;
    const { orgId } = await seedDemo(db);
    const endpoint = await db.endpoint.findFirstOrThrow({ where: { orgId } });
    const rename = (tx: { execute(s: Prisma.Sql): Promise<number> }, name: string) =>
      tx.execute(Prisma.sql`UPDATE "Endpoint" SET name = ${name} WHERE id = ${endpoint.id}::uuid`);

    await expect(
      directSql(db).transaction(async (tx) => {
        expect(await rename(tx, "half-written")).toBe(1);
        throw new Error("the caller failed mid-way");
      }),
    ).rejects.toThrow("the caller failed mid-way");
    expect((await db.endpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).name).toBe(
      endpoint.name,
    );

    const result = await directSql(db).transaction(async (tx) => {
      await rename(tx, "renamed");
      return tx.rows<{ name: string }>(
        Prisma.sql`SELECT name FROM "Endpoint" WHERE id = ${endpoint.id}::uuid`,
      );
    });
    expect(result).toEqual([{ name: "renamed" }]);
    expect((await db.endpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).name).toBe(
      "renamed",
    );
  });

  it("ends a transaction its caller left idle, releasing its locks", async () => {
    const db = testDb.current.db;
    const { orgId } = await seedDemo(db);
    const endpoint = await db.endpoint.findFirstOrThrow({ where: { orgId } });
    const wedged = directSql(db).transaction(async (tx) => {
      await tx.rows(
        Prisma.sql`SELECT id FROM "Endpoint" WHERE id = ${endpoint.id}::uuid FOR UPDATE`,
      );
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      return tx.rows(Prisma.sql`SELECT 1`);
    }, 300);
    await expect(wedged).rejects.toThrow();
    // The row lock went with the server's session: another writer gets the row.
    await db.endpoint.update({ where: { id: endpoint.id }, data: { name: "after" } });
    // And the pool is still usable.
    expect(await directSql(db).rows(Prisma.sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
  });

  it("waits at most its acquire timeout for a connection, then is busy; and leaks none", async () => {
    // A pool of one, held by a transaction: the next statement waits, then gives up.
    const db = createDbClient({
      url: testDb.current.url,
      maxConnections: 1,
      acquireTimeoutMs: 100,
    });
    try {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let held!: () => void;
      const holding = new Promise<void>((resolve) => (held = resolve));
      const holder = directSql(db).transaction(async (tx) => {
        await tx.rows(Prisma.sql`SELECT 1`);
        held();
        await released;
        return "held";
      });
      await holding;
      await expect(directSql(db).rows(Prisma.sql`SELECT 1`)).rejects.toBeInstanceOf(
        DatabaseBusyError,
      );
      await expect(
        directSql(db).transaction((tx) => tx.rows(Prisma.sql`SELECT 1`)),
      ).rejects.toMatchObject({ code: "THAW_DB_POOL_TIMEOUT" });
      release();
      expect(await holder).toBe("held");
      // The connection the two given-up requests were later handed went back to the pool.
      expect(await directSql(db).rows(Prisma.sql`SELECT 2 AS two`)).toEqual([{ two: 2 }]);
      expect(await directSql(db).rows(Prisma.sql`SELECT 3 AS three`)).toEqual([{ three: 3 }]);
    } finally {
      await db.$disconnect();
    }
  });

  it("keeps a connection whose statement failed, and answers the statement's error", async () => {
    const db = createDbClient({ url: testDb.current.url, maxConnections: 1 });
    try {
      await expect(directSql(db).rows(Prisma.sql`SELECT 1/0`)).rejects.toThrow("division by zero");
      expect(await directSql(db).rows(Prisma.sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
    } finally {
      await db.$disconnect();
    }
  });
});
