import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { findEndpoint } from "../endpoints/find-endpoint.ts";
import { AppError, parseInput } from "../errors/index.ts";
import {
  ALERT_RULE_VIEW_INCLUDE,
  CreateAlertRuleInput,
  MAX_ALERT_RULES_PER_ORG,
  toAlertRuleView,
  type AlertRuleView,
} from "./alert-spec.ts";

/**
 * A new alert rule on one endpoint or on all of the org's. It fires through webhooks: any
 * subscription to alert.firing / alert.resolved (Standard Webhooks or Slack format) gets it.
 */
export async function createAlertRule({
  actor,
  input,
  db,
  where = "input",
}: {
  actor: Actor;
  input: unknown;
  db: DbClient;
  where?: string;
}): Promise<AlertRuleView> {
  assertCan(actor, "alerts:manage");
  const spec = parseInput(CreateAlertRuleInput, input, where);
  return db.$transaction(async (tx) => {
    // The org's row lock: two creates cannot both pass the count.
    await tx.$queryRaw`SELECT id FROM "Org" WHERE id = ${actor.orgId}::uuid FOR NO KEY UPDATE`;
    const count = await tx.alertRule.count({ where: { orgId: actor.orgId } });
    if (count >= MAX_ALERT_RULES_PER_ORG)
      throw new AppError(
        "UNPROCESSABLE",
        `The org has ${count} alert rules, the most it may keep: delete one first.`,
        { field: where },
      );
    let endpointId: string | null = null;
    if (spec.endpoint !== undefined) {
      try {
        endpointId = (await findEndpoint(tx, actor, spec.endpoint)).id;
      } catch (error) {
        if (error instanceof AppError && error.code === "NOT_FOUND")
          throw new AppError("UNPROCESSABLE", `${where}.endpoint: ${error.message}`, {
            field: `${where}.endpoint`,
          });
        throw error;
      }
    }
    const row = await tx.alertRule.create({
      data: {
        orgId: actor.orgId,
        endpointId,
        kind: spec.kind,
        name: spec.name,
        enabled: spec.enabled,
        ...(spec.kind === "time_to_ready_slo" && {
          thresholdSeconds: spec.thresholdSeconds,
          objective: spec.objective,
        }),
      },
      include: ALERT_RULE_VIEW_INCLUDE,
    });
    await recordAudit(tx, actor, {
      action: "alert_rule.created",
      targetType: "alert_rule",
      targetId: row.id,
      metadata: { name: row.name, kind: row.kind, endpointId },
    });
    return toAlertRuleView(row);
  });
}
