import type { DbClient } from "@thaw/db";
import { assertCan, type Actor } from "../auth/index.ts";
import { ALERT_RULE_VIEW_INCLUDE, toAlertRuleView, type AlertRuleView } from "./alert-spec.ts";
import { findAlertRule } from "./find-alert-rule.ts";

/** One alert rule of the org. */
export async function getAlertRule({
  actor,
  id,
  db,
}: {
  actor: Actor;
  id: unknown;
  db: DbClient;
}): Promise<AlertRuleView> {
  assertCan(actor, "endpoints:read");
  const found = await findAlertRule(db, actor, id);
  const row = await db.alertRule.findUniqueOrThrow({
    where: { id: found.id },
    include: ALERT_RULE_VIEW_INCLUDE,
  });
  return toAlertRuleView(row);
}
