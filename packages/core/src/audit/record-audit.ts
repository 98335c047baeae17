import { Prisma, type Db } from "@thaw/db";
import { uuidV7 } from "../placement/uuid-v7.ts";
import { actorIdOf, type Actor } from "../auth/index.ts";

/** One audit entry for what an actor did, written in the caller's transaction. */
export async function recordAudit(
  tx: Db,
  actor: Actor,
  entry: { action: string; targetType: string; targetId: string; metadata?: object },
): Promise<void> {
  await tx.auditLog.create({
    data: {
      orgId: actor.orgId,
      actorType: actor.type,
      actorId: actorIdOf(actor),
      action: entry.action,
      targetType: entry.targetType,
      targetId: entry.targetId,
      metadata: entry.metadata ?? {},
    },
  });
}

/**
 * recordAudit's row as one INSERT, for a caller that folds its writes into one statement
 * (the scale call's, as a CTE).
 */
export function auditInsertSql(
  actor: Actor,
  entry: { action: string; targetType: string; targetId: string; metadata?: object },
  at: Date,
): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO "AuditLog" (id, "orgId", "actorType", "actorId", action, "targetType",
                            "targetId", metadata, "createdAt")
    VALUES (${uuidV7()}::uuid, ${actor.orgId}::uuid, ${actor.type}::"ActorType",
            ${actorIdOf(actor)}, ${entry.action}, ${entry.targetType}, ${entry.targetId},
            ${JSON.stringify(entry.metadata ?? {})}::jsonb, ${at})`;
}
