import type { Db } from "@thaw/db";
import { recordWebhookEvents } from "../webhooks/record-webhook-event.ts";
import type { AlertRuleKind } from "./alert-spec.ts";

// Episodes: a rule opens one on an endpoint when it starts to fire and resolves it when it
// stops. The open row's openKey (rule, endpoint, severity) is unique, so however many
// evaluations race — two history jobs, the sweep — one episode opens and one alert.firing is
// recorded; resolving clears the key with a conditional update, so one alert.resolved is.
// Both events go through the webhook outbox (recorded in the caller's transaction).

export interface AlertTarget {
  orgId: string;
  rule: { id: string; name: string; kind: AlertRuleKind };
  endpoint: { id: string; slug: string };
  severity: string;
}

const openKeyOf = (t: AlertTarget) => `${t.rule.id}:${t.endpoint.id}:${t.severity}`;

function eventData(
  t: AlertTarget,
  episode: { id: string; openedAt: Date; resolvedAt: Date | null; details: unknown },
  summary: string,
) {
  return {
    episodeId: episode.id,
    rule: t.rule,
    endpointId: t.endpoint.id,
    endpointSlug: t.endpoint.slug,
    severity: t.severity,
    summary,
    openedAt: episode.openedAt.toISOString(),
    resolvedAt: episode.resolvedAt?.toISOString() ?? null,
    details: episode.details,
  };
}

/** Opens the target's episode unless one is open; the deliveries of its alert.firing (none if it was open). */
export async function openAlertEpisode(
  db: Db,
  target: AlertTarget,
  finding: { summary: string; details: Record<string, unknown>; at: Date },
): Promise<string[]> {
  const details = JSON.parse(
    JSON.stringify({ summary: finding.summary, ...finding.details }),
  ) as object;
  const [opened] = await db.alertEpisode.createManyAndReturn({
    data: [
      {
        orgId: target.orgId,
        ruleId: target.rule.id,
        endpointId: target.endpoint.id,
        openKey: openKeyOf(target),
        severity: target.severity,
        details,
        openedAt: finding.at,
      },
    ],
    skipDuplicates: true,
  });
  if (!opened) return [];
  return recordWebhookEvents(db, [
    {
      orgId: target.orgId,
      type: "alert.firing",
      key: opened.id,
      data: eventData(target, opened, finding.summary),
      at: finding.at,
    },
  ]);
}

/** Resolves the target's open episode, if any; the deliveries of its alert.resolved. */
export async function resolveAlertEpisode(
  db: Db,
  target: AlertTarget,
  resolution: { summary: string; at: Date },
): Promise<string[]> {
  const open = await db.alertEpisode.findUnique({ where: { openKey: openKeyOf(target) } });
  if (!open) return [];
  const { count } = await db.alertEpisode.updateMany({
    where: { id: open.id, resolvedAt: null },
    data: { openKey: null, resolvedAt: resolution.at },
  });
  if (count === 0) return [];
  return recordWebhookEvents(db, [
    {
      orgId: target.orgId,
      type: "alert.resolved",
      key: open.id,
      data: eventData(target, { ...open, resolvedAt: resolution.at }, resolution.summary),
      at: resolution.at,
    },
  ]);
}
