import type { Db } from "@thaw/db";

/**
 * The `provision` phase (ARCHITECTURE.md §4: EC2 launch to agent joined) of cold starts that had to
 * wait for a host: placed on a host Thaw launched after the replica was created. Recorded by
 * the control plane at placement as sequence 0 (agents number their events from 1), so it is
 * idempotent like every phase event and stacks first in the breakdown.
 */
export async function recordProvisionPhases({
  db,
  coldStartIds,
}: {
  db: Db;
  coldStartIds: readonly string[];
}): Promise<number> {
  if (coldStartIds.length === 0) return 0;
  return db.$executeRaw`
    INSERT INTO "PhaseEvent" (id, "coldStartId", sequence, phase, "startedAt", "endedAt", seconds, attributes)
    SELECT gen_random_uuid(), c.id, 0, 'provision', n."createdAt", j."usedAt",
           extract(epoch FROM j."usedAt" - n."createdAt"),
           jsonb_build_object('instanceType', n."instanceType", 'zone', n.zone,
                              'instanceId', n."instanceId", 'provider', n.provider::text)
    FROM "ColdStart" c
    JOIN "Node" n ON n.id = c."nodeId"
    JOIN "Replica" r ON r.id = c."replicaId"
    JOIN LATERAL (
      SELECT min(t."usedAt") AS "usedAt" FROM "JoinToken" t WHERE t."nodeId" = n.id
    ) j ON j."usedAt" IS NOT NULL
    WHERE c.id = ANY(${coldStartIds as string[]}::uuid[]) AND n.provisioned
      AND n."createdAt" > r."createdAt"
    ON CONFLICT ("coldStartId", sequence) DO NOTHING`;
}
