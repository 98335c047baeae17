import { Prisma } from "@thaw/db";

/**
 * The statement that takes the nodes' placement locks, in id order (no deadlock between two
 * takers): advisory locks, not row locks, so a node's heartbeat never waits for a placement.
 * Placement, the warm pool's sleep and a host's retirement serialise on them.
 */
export function lockNodesSql(nodeIds: readonly string[]): Prisma.Sql {
  const sorted = [...nodeIds].sort();
  return Prisma.sql`SELECT count(pg_advisory_xact_lock(hashtextextended('thaw-node:' || id, 0)))::int AS locked
    FROM (SELECT id FROM unnest(${sorted}::text[]) AS id ORDER BY id) AS ordered`;
}
