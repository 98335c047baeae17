import type { Db } from "@thaw/db";
import {
  bottleneckHints,
  HOST_CEILINGS_SELECT,
  hostCeilings,
} from "../analytics/bottleneck-hints.ts";
import { asAttributes } from "../analytics/get-deployment-breakdown.ts";
import { openAlertEpisode, resolveAlertEpisode } from "./alert-episodes.ts";
import { evaluateSloRule } from "./evaluate-slo-rule.ts";
import { slowStartFinding } from "./slow-start-finding.ts";

/**
 * The alert rules watching a closed cold start's endpoint, evaluated on it (the history job,
 * after the start's webhook events): a slow-start rule opens its episode when the start
 * missed its predicted p90 and resolves it at a start that did not; an SLO rule re-reads its
 * windows. A run again (a retried job) opens nothing twice. Answers the deliveries written.
 */
export async function evaluateColdStartAlerts({
  db,
  coldStartId,
  now = new Date(),
}: {
  db: Db;
  coldStartId: string;
  now?: Date;
}): Promise<string[]> {
  const start = await db.coldStart.findUnique({
    where: { id: coldStartId },
    select: {
      id: true,
      orgId: true,
      endpointId: true,
      status: true,
      path: true,
      actualSeconds: true,
      predictedP90Seconds: true,
      finishedAt: true,
      endpoint: { select: { id: true, slug: true } },
    },
  });
  if (!start || (start.status !== "succeeded" && start.status !== "failed")) return [];
  const rules = await db.alertRule.findMany({
    where: {
      orgId: start.orgId,
      enabled: true,
      OR: [{ endpointId: start.endpointId }, { endpointId: null }],
    },
  });
  if (rules.length === 0) return [];
  const deliveries: string[] = [];
  const endpoint = start.endpoint;
  for (const rule of rules.filter((r) => r.kind === "time_to_ready_slo"))
    deliveries.push(...(await evaluateSloRule(db, rule, endpoint, now)));
  const slowRules = rules.filter((r) => r.kind === "slow_cold_start");
  if (slowRules.length === 0 || start.status !== "succeeded" || start.actualSeconds === null)
    return deliveries;
  // Only the endpoint's latest succeeded start speaks for it: a history job run late for an
  // older start must not reopen (or resolve) what a newer one settled.
  const newer = await db.coldStart.findFirst({
    where: {
      endpointId: start.endpointId,
      status: "succeeded",
      finishedAt: { gt: start.finishedAt ?? now },
    },
    select: { id: true },
  });
  if (newer) return deliveries;
  const slow =
    start.predictedP90Seconds !== null && start.actualSeconds > start.predictedP90Seconds;
  const finding = slow ? await findingOf(db, start.id) : null;
  for (const rule of slowRules) {
    const target = {
      orgId: rule.orgId,
      rule: { id: rule.id, name: rule.name, kind: rule.kind },
      endpoint,
      severity: "warning",
    };
    if (finding)
      deliveries.push(
        ...(await openAlertEpisode(db, target, {
          summary: finding.summary,
          details: { coldStartId: start.id, ...finding },
          at: start.finishedAt ?? now,
        })),
      );
    else
      deliveries.push(
        ...(await resolveAlertEpisode(db, target, {
          summary: `${start.path} start ${start.id} was ready within its predicted p90`,
          at: start.finishedAt ?? now,
        })),
      );
  }
  return deliveries;
}

/** The slow start's phases and bottleneck hints, read as the cold-start page reads them. */
async function findingOf(db: Db, coldStartId: string) {
  const row = await db.coldStart.findUniqueOrThrow({
    where: { id: coldStartId },
    include: {
      phases: { orderBy: { sequence: "asc" } },
      deployment: { select: { imageLayers: true, engineProfile: true } },
      node: { select: HOST_CEILINGS_SELECT },
    },
  });
  const phases = row.phases.map((p) => ({
    phase: p.phase,
    seconds: p.seconds,
    bytes: p.bytes === null ? null : Number(p.bytes),
    throughputBps: p.throughputBps,
    attributes: asAttributes(p.attributes),
  }));
  return slowStartFinding({
    path: row.path,
    actualSeconds: row.actualSeconds!,
    predictedP90Seconds: row.predictedP90Seconds!,
    phases,
    hints: bottleneckHints({
      path: row.path,
      phases,
      host: row.node && hostCeilings(row.node),
      imageLayers: row.deployment.imageLayers,
      engineProfile: row.deployment.engineProfile,
    }),
  });
}
