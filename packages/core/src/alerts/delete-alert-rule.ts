import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { findAlertRule } from "./find-alert-rule.ts";

/** Deletes a rule and its episodes (no alert.resolved is sent: the rule is gone, not resolved). */
export async function deleteAlertRule({
  actor,
  id,
  db,
}: {
  actor: Actor;
  id: unknown;
  db: DbClient;
}): Promise<{ id: string; deleted: true }> {
  assertCan(actor, "alerts:manage");
  return db.$transaction(async (tx) => {
    const found = await findAlertRule(tx, actor, id);
    await tx.alertRule.delete({ where: { id: found.id } });
    await recordAudit(tx, actor, {
      action: "alert_rule.deleted",
      targetType: "alert_rule",
      targetId: found.id,
      metadata: { name: found.name, kind: found.kind },
    });
    return { id: found.id, deleted: true as const };
  });
}
