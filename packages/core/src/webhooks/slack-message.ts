// A delivery's event as a Slack-compatible incoming-webhook message: `text` (what
// notifications and clients without blocks show) and Block Kit `blocks` (a header and the
// facts as fields). Mattermost and Rocket.Chat take the same { text } body. The words come
// from the event's data; `<`, `>` and `&` are escaped as Slack's mrkdwn asks, so a slug or an
// error message cannot forge a link or a mention.

interface EventPayload {
  type?: unknown;
  timestamp?: unknown;
  data?: unknown;
}

export interface SlackMessage {
  text: string;
  blocks: (
    | { type: "header"; text: { type: "plain_text"; text: string } }
    | { type: "section"; text: { type: "mrkdwn"; text: string } }
    | { type: "section"; fields: { type: "mrkdwn"; text: string }[] }
    | { type: "context"; elements: { type: "mrkdwn"; text: string }[] }
  )[];
}

/** Slack limits: a header's text to 150 characters, a section's to 3,000, ten fields. */
const HEADER_MAX = 150;
const SECTION_MAX = 3_000;
const FIELDS_MAX = 10;

export function escapeSlackText(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

const clip = (text: string, max: number) =>
  text.length <= max ? text : `${text.slice(0, max - 1)}…`;
const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const secs = (v: unknown) => (num(v) === null ? null : `${num(v)!.toFixed(1)} s`);

/** The headline and facts of an event, by its type. */
function describe(
  type: string,
  data: Record<string, unknown>,
): { title: string; lines: string[]; fields: [string, string | null][] } {
  const endpoint = str(data.endpointSlug) ?? str(data.endpointId) ?? "an endpoint";
  if (type === "alert.firing" || type === "alert.resolved") {
    const rule = (data.rule ?? {}) as Record<string, unknown>;
    const firing = type === "alert.firing";
    return {
      title: `${firing ? "🔥 Firing" : "✅ Resolved"}: ${str(rule.name) ?? "alert"} on ${endpoint}`,
      lines: [str(data.summary)].filter((l): l is string => l !== null),
      fields: [
        ["Severity", str(data.severity)],
        ["Rule", str(rule.kind)],
        ["Since", str(data.openedAt)],
        ["Resolved", firing ? null : str(data.resolvedAt)],
      ],
    };
  }
  if (type.startsWith("cold_start.")) {
    const slowest = (data.slowestPhase ?? null) as Record<string, unknown> | null;
    const verb =
      { "cold_start.succeeded": "ready", "cold_start.failed": "failed", "cold_start.slow": "slow" }[
        type
      ] ?? type;
    return {
      title: `Cold start ${verb} on ${endpoint}`,
      lines: [str(data.error)].filter((l): l is string => l !== null),
      fields: [
        ["Path", str(data.path)],
        ["Time to ready", secs(data.actualSeconds)],
        ["Predicted p90", secs(data.predictedP90Seconds)],
        [
          "Slowest phase",
          slowest && str(slowest.phase)
            ? `${str(slowest.phase)} (${secs(slowest.seconds) ?? "?"})`
            : null,
        ],
      ],
    };
  }
  // Any other event: its type, and its plain facts as fields.
  return {
    title: `${type} on ${endpoint}`,
    lines: [],
    fields: Object.entries(data)
      .filter(([, v]) => typeof v === "string" || typeof v === "number" || typeof v === "boolean")
      .map(([k, v]) => [k, String(v)] as [string, string]),
  };
}

export function slackMessage(payload: unknown): SlackMessage {
  const p = (payload ?? {}) as EventPayload;
  const type = str(p.type) ?? "event";
  const data = (p.data && typeof p.data === "object" ? p.data : {}) as Record<string, unknown>;
  const { title, lines, fields } = describe(type, data);
  const shown = fields.filter((f): f is [string, string] => f[1] !== null).slice(0, FIELDS_MAX);
  const blocks: SlackMessage["blocks"] = [
    { type: "header", text: { type: "plain_text", text: clip(title, HEADER_MAX) } },
  ];
  if (lines.length > 0)
    blocks.push({
      type: "section",
      text: { type: "mrkdwn", text: clip(lines.map(escapeSlackText).join("\n"), SECTION_MAX) },
    });
  if (shown.length > 0)
    blocks.push({
      type: "section",
      fields: shown.map(([k, v]) => ({
        type: "mrkdwn",
        text: clip(`*${escapeSlackText(k)}*\n${escapeSlackText(v)}`, 2_000),
      })),
    });
  blocks.push({
    type: "context",
    elements: [{ type: "mrkdwn", text: escapeSlackText(`${type} · ${str(p.timestamp) ?? ""}`) }],
  });
  return { text: clip(escapeSlackText([title, ...lines].join(" — ")), SECTION_MAX), blocks };
}
