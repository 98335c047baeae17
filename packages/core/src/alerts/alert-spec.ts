import { plainText } from "@thaw/protocol";
import { z } from "zod";
import { EndpointRef } from "../endpoints/find-endpoint.ts";
import { BURN_RATE_CONDITIONS } from "./burn-rate-conditions.ts";

// Alert rules and their episodes as clients send them and as the API answers them.

/** The most alert rules one org may keep (checked before a rule is written). */
export const MAX_ALERT_RULES_PER_ORG = 100;

export const AlertRuleKind = z.enum(["slow_cold_start", "time_to_ready_slo"]);
export type AlertRuleKind = z.infer<typeof AlertRuleKind>;

const Name = plainText(100);
/** Seconds from request to ready that count as a good start: 1 s to a day. */
const ThresholdSeconds = z.number().min(1).max(86_400);
/** The share of starts that must be good: from 50 % to 99.99 % (a budget of at least 0.01 %). */
const Objective = z.number().min(0.5).max(0.9999);

const Common = {
  name: Name,
  /** The endpoint's slug or id; left out, the rule watches every endpoint of the org. */
  endpoint: EndpointRef.optional(),
  enabled: z.boolean().default(true),
};

export const CreateAlertRuleInput = z
  .discriminatedUnion("kind", [
    z
      .object({ kind: z.literal("slow_cold_start"), ...Common })
      .strict()
      .meta({
        id: "CreateSlowColdStartRule",
        description:
          "Fires when a cold start takes longer than its predicted p90, naming its slowest phase and that phase's bottleneck hint; resolves at the endpoint's next start within its p90.",
      }),
    z
      .object({
        kind: z.literal("time_to_ready_slo"),
        ...Common,
        thresholdSeconds: ThresholdSeconds,
        objective: Objective,
      })
      .strict()
      .meta({
        id: "CreateTimeToReadySloRule",
        description: `A time-to-ready SLO: \`objective\` of cold starts ready within \`thresholdSeconds\` (a failed start is bad). Fires on multi-window burn rates (SRE workbook): ${BURN_RATE_CONDITIONS.map((c) => `${c.severity} when ${c.longSeconds / 3600} h and ${c.shortSeconds / 60} min both burn faster than ${c.burnRate}`).join("; ")}; resolves when none does.`,
      }),
  ])
  .meta({ id: "CreateAlertRule" });
export type CreateAlertRuleInput = z.output<typeof CreateAlertRuleInput>;

export const UpdateAlertRuleInput = z
  .object({
    name: Name.optional(),
    enabled: z.boolean().optional(),
    /** time_to_ready_slo only. */
    thresholdSeconds: ThresholdSeconds.optional(),
    /** time_to_ready_slo only. */
    objective: Objective.optional(),
  })
  .strict()
  .meta({ id: "UpdateAlertRule" });
export type UpdateAlertRuleInput = z.output<typeof UpdateAlertRuleInput>;

export const AlertRuleId = z.uuid({ error: "an alert rule id (uuid)" });

const EndpointName = z.object({ id: z.uuid(), slug: z.string() });

export const AlertRuleView = z
  .object({
    id: z.uuid(),
    name: z.string(),
    kind: AlertRuleKind,
    /** null: every endpoint of the org. */
    endpoint: EndpointName.nullable(),
    enabled: z.boolean(),
    thresholdSeconds: z.number().nullable(),
    objective: z.number().nullable(),
    /** Episodes of this rule firing now. */
    openEpisodes: z.number().int(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "AlertRule" });
export type AlertRuleView = z.infer<typeof AlertRuleView>;

export const AlertRuleList = z
  .object({ rules: z.array(AlertRuleView) })
  .meta({ id: "AlertRuleList" });

export const AlertEpisodeView = z
  .object({
    id: z.uuid(),
    rule: z.object({ id: z.uuid(), name: z.string(), kind: AlertRuleKind }),
    endpoint: EndpointName,
    /** page or ticket (burn-rate conditions); warning for a slow start. */
    severity: z.string(),
    /** One line: what fired, e.g. the slow phase and its bottleneck hint. */
    summary: z.string(),
    details: z.record(z.string(), z.unknown()),
    openedAt: z.iso.datetime(),
    /** null while it fires. */
    resolvedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: "AlertEpisode" });
export type AlertEpisodeView = z.infer<typeof AlertEpisodeView>;

export const AlertEpisodeList = z
  .object({ episodes: z.array(AlertEpisodeView) })
  .meta({ id: "AlertEpisodeList" });

export const ListAlertEpisodesQuery = z
  .object({
    state: z.enum(["open", "resolved", "all"]).default("all"),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    endpoint: EndpointRef.optional(),
  })
  .strict();

export function toAlertRuleView(row: {
  id: string;
  name: string;
  kind: AlertRuleKind;
  endpoint: { id: string; slug: string } | null;
  enabled: boolean;
  thresholdSeconds: number | null;
  objective: number | null;
  createdAt: Date;
  updatedAt: Date;
  _count?: { episodes: number };
}): AlertRuleView {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    endpoint: row.endpoint && { id: row.endpoint.id, slug: row.endpoint.slug },
    enabled: row.enabled,
    thresholdSeconds: row.thresholdSeconds,
    objective: row.objective,
    openEpisodes: row._count?.episodes ?? 0,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Selects what toAlertRuleView reads (with the count of open episodes). */
export const ALERT_RULE_VIEW_INCLUDE = {
  endpoint: { select: { id: true, slug: true } },
  _count: { select: { episodes: { where: { resolvedAt: null } } } },
} as const;
