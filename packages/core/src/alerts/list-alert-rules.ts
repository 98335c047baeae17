import type { DbClient } from "@thaw/db";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { ALERT_RULE_VIEW_INCLUDE, toAlertRuleView, type AlertRuleView } from "./alert-spec.ts";

/** The org's alert rules, oldest first, each with how many of its episodes fire now. */
export async function listAlertRules({
  actor,
  db,
}: {
  actor: Actor;
  db: DbClient;
}): Promise<{ rules: AlertRuleView[] }> {
  assertCan(actor, "endpoints:read");
  const rows = await db.alertRule.findMany({
    where: orgScope(actor),
    orderBy: { createdAt: "asc" },
    include: ALERT_RULE_VIEW_INCLUDE,
  });
  return { rules: rows.map(toAlertRuleView) };
}
