import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { resolveAlertEpisode } from "./alert-episodes.ts";
import {
  ALERT_RULE_VIEW_INCLUDE,
  toAlertRuleView,
  UpdateAlertRuleInput,
  type AlertRuleView,
} from "./alert-spec.ts";
import { findAlertRule } from "./find-alert-rule.ts";
import type { WithFollowUps } from "../queues/follow-ups.ts";
import { webhookDeliveryFollowUps } from "../webhooks/record-webhook-event.ts";

/**
 * Renames, enables or disables a rule, or moves an SLO's threshold or objective. Disabling it
 * resolves its open episodes (their alert.resolved says why): a rule that no longer watches
 * must not leave an alert firing forever. Answers the rule; the follow-ups send the deliveries.
 */
export async function updateAlertRule({
  actor,
  id,
  input,
  db,
  where = "input",
  now = new Date(),
}: {
  actor: Actor;
  id: unknown;
  input: unknown;
  db: DbClient;
  where?: string;
  now?: Date;
}): Promise<WithFollowUps<AlertRuleView>> {
  assertCan(actor, "alerts:manage");
  const change = parseInput(UpdateAlertRuleInput, input, where);
  return db.$transaction(async (tx) => {
    const found = await findAlertRule(tx, actor, id);
    if (
      found.kind !== "time_to_ready_slo" &&
      (change.thresholdSeconds !== undefined || change.objective !== undefined)
    ) {
      const field = change.thresholdSeconds !== undefined ? "thresholdSeconds" : "objective";
      throw new AppError(
        "UNPROCESSABLE",
        `${where}.${field}: only a time_to_ready_slo rule has one; this is a ${found.kind} rule.`,
        { field: `${where}.${field}` },
      );
    }
    // Disabling resolves first, so the rule answered counts no open episode.
    const deliveryIds: string[] = [];
    if (change.enabled === false) {
      const open = await tx.alertEpisode.findMany({
        where: { ruleId: found.id, resolvedAt: null },
      });
      const slugs = new Map(
        (
          await tx.endpoint.findMany({
            where: { id: { in: [...new Set(open.map((e) => e.endpointId))] } },
            select: { id: true, slug: true },
          })
        ).map((e) => [e.id, e.slug]),
      );
      const rule = { id: found.id, name: change.name ?? found.name, kind: found.kind };
      for (const episode of open)
        deliveryIds.push(
          ...(await resolveAlertEpisode(
            tx,
            {
              orgId: found.orgId,
              rule,
              endpoint: { id: episode.endpointId, slug: slugs.get(episode.endpointId) ?? "" },
              severity: episode.severity,
            },
            { summary: "the rule was disabled", at: now },
          )),
        );
    }
    const row = await tx.alertRule.update({
      where: { id: found.id },
      data: {
        ...(change.name !== undefined && { name: change.name }),
        ...(change.enabled !== undefined && { enabled: change.enabled }),
        ...(change.thresholdSeconds !== undefined && { thresholdSeconds: change.thresholdSeconds }),
        ...(change.objective !== undefined && { objective: change.objective }),
      },
      include: ALERT_RULE_VIEW_INCLUDE,
    });
    await recordAudit(tx, actor, {
      action: "alert_rule.updated",
      targetType: "alert_rule",
      targetId: row.id,
      metadata: { name: row.name, changed: Object.keys(change) },
    });
    return {
      result: toAlertRuleView(row),
      followUps: webhookDeliveryFollowUps(deliveryIds),
    };
  });
}
