import { describe, expect, it } from "vitest";
import { createDbClient, openPooledConnections } from "./client.ts";
import { adminQuery, useTestDatabase } from "./testing/index.ts";

// A long-running server opens its kept connections at start (openPooledConnections) and keeps
// them however long it idles: a burst after a quiet spell must not open them while it is late.
describe("kept pool connections", () => {
  const testDb = useTestDatabase();

  /** The backends Postgres has for this file's database under one application name. */
  const backends = async (applicationName: string) => {
    const { rows } = await adminQuery<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = $2`,
      [testDb.current.name, applicationName],
    );
    return rows[0]!.n;
  };
  const clientNamed = (applicationName: string, options: { minConnections?: number }) => {
    const url = new URL(testDb.current.url);
    url.searchParams.set("application_name", applicationName);
    return createDbClient({ url: url.href, maxConnections: 5, idleTimeoutMs: 50, ...options });
  };
  const idleLongerThanTimeout = () => new Promise((resolve) => setTimeout(resolve, 400));

  it("opens the kept connections at once and keeps them past the idle timeout", async () => {
    const db = clientNamed("kept-three", { minConnections: 3 });
    try {
      expect(await backends("kept-three")).toBe(0);
      expect(await openPooledConnections(db)).toBe(3);
      expect(await backends("kept-three")).toBe(3);
      await idleLongerThanTimeout();
      expect(await backends("kept-three")).toBe(3);
      // Opening again adds none: the pool already holds them.
      expect(await openPooledConnections(db)).toBe(3);
      expect(await backends("kept-three")).toBe(3);
    } finally {
      await db.$disconnect();
    }
  });

  it("without kept connections, an idle pool closes what it opened", async () => {
    const db = clientNamed("kept-none", {});
    try {
      expect(await openPooledConnections(db)).toBe(0);
      await db.$queryRaw`SELECT 1`;
      expect(await backends("kept-none")).toBe(1);
      await idleLongerThanTimeout();
      expect(await backends("kept-none")).toBe(0);
    } finally {
      await db.$disconnect();
    }
  });

  it("rejects when Postgres cannot be reached", async () => {
    const db = createDbClient({
      url: "postgresql://nobody:nothing@127.0.0.1:1/none",
      minConnections: 2,
    });
    try {
      await expect(openPooledConnections(db)).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await db.$disconnect();
    }
  });
});
