import type { Db } from "@thaw/db";
import { orgScope, type Actor } from "../auth/index.ts";
import { AppError } from "../errors/index.ts";
import { AlertRuleId } from "./alert-spec.ts";

/** An alert rule of the actor's org; anything else (another org's, a malformed id) is NOT_FOUND. */
export async function findAlertRule(db: Db, actor: Actor, id: unknown) {
  const parsed = AlertRuleId.safeParse(id);
  const row = parsed.success
    ? await db.alertRule.findFirst({ where: { id: parsed.data, ...orgScope(actor) } })
    : null;
  if (!row)
    throw new AppError("NOT_FOUND", `No alert rule '${String(id).slice(0, 80)}'.`, { field: "id" });
  return row;
}
