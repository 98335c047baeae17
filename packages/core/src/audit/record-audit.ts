import type { Db } from "@thaw/db";
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
