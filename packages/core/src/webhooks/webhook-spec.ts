import { plainText } from "@thaw/protocol";
import { z } from "zod";

// Webhook subscriptions and deliveries as clients send them and as the API answers them. The
// signing secret is answered once (on create and on rotation) and never by a read.

/** The events an org can subscribe to; each is recorded where the change it names is made. */
export const WEBHOOK_EVENT_TYPES = [
  "cold_start.succeeded",
  "cold_start.failed",
  /** A cold start that took longer than its predicted p90. */
  "cold_start.slow",
  "snapshot.quarantined",
  "endpoint.scaled",
  "deployment.rolled",
  /** The fleet launched a host on another offering than the planner's pick (no capacity there). */
  "capacity.fallback",
  /** The fleet held back a launch at the org's spend cap: once per episode (until a run holds back none). */
  "spend_cap.reached",
  /** An alert rule started to fire on an endpoint: an episode opened (sent once per episode). */
  "alert.firing",
  /** That episode ended. */
  "alert.resolved",
] as const;
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof WebhookEventType>;

/**
 * An http(s) URL without credentials; where it may point is checked by webhookUrlProblem. Every
 * refusal is a rule (422): any URI the document's `format: uri` allows is refused by name.
 */
export const WebhookUrl = z
  .string()
  .max(2_048)
  .superRefine((text, ctx) => {
    const url = URL.parse(text);
    // The document says `format: uri` (RFC 3986): printable ASCII only. The WHATWG parser
    // would percent-encode the rest and accept it, answering 201 for a body the document refuses.
    if (/[^\x21-\x7E]/.test(text))
      ctx.addIssue({
        code: "custom",
        message: "a URI of printable ASCII (percent-encode spaces and other characters)",
      });
    else if (!url || (url.protocol !== "https:" && url.protocol !== "http:"))
      ctx.addIssue({ code: "custom", message: "an absolute http(s) URL" });
    else if (url.username || url.password)
      ctx.addIssue({
        code: "custom",
        message:
          "no credentials in the URL (put a token in its path or query, or verify the signature)",
      });
  })
  // Stored and dialled as the WHATWG parser normalises it (control characters encoded or gone).
  .transform((text) => new URL(text).toString())
  .meta({ format: "uri", example: "https://hooks.example.com/thaw" });

const EventTypes = z
  .array(WebhookEventType)
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length)
  .transform((types) => [...new Set(types)]);

/**
 * How deliveries are written: `standard`, the signed JSON event ({ type, timestamp, data });
 * `slack`, a Slack-compatible incoming-webhook message ({ text, blocks }) for chat tools
 * (Slack, Mattermost, Rocket.Chat) that show nothing else — still signed, for receivers that check.
 */
export const WebhookFormat = z.enum(["standard", "slack"]);
export type WebhookFormat = z.infer<typeof WebhookFormat>;

/** What the subscription is for, as its owners would name it; "" for none. */
const Description = z.union([z.literal(""), plainText(256)]);

export const CreateWebhookInput = z
  .object({
    url: WebhookUrl,
    description: Description.optional(),
    eventTypes: EventTypes,
    enabled: z.boolean().default(true),
    format: WebhookFormat.default("standard"),
  })
  .strict()
  .meta({ id: "CreateWebhook" });
export type CreateWebhookInput = z.output<typeof CreateWebhookInput>;

export const UpdateWebhookInput = z
  .object({
    url: WebhookUrl.optional(),
    description: Description.optional(),
    eventTypes: EventTypes.optional(),
    enabled: z.boolean().optional(),
    format: WebhookFormat.optional(),
  })
  .strict()
  .meta({ id: "UpdateWebhook" });
export type UpdateWebhookInput = z.output<typeof UpdateWebhookInput>;

export const WebhookId = z.uuid({ error: "a webhook id (uuid)" });

export const WebhookView = z
  .object({
    id: z.uuid(),
    url: z.string(),
    description: z.string(),
    eventTypes: z.array(WebhookEventType),
    enabled: z.boolean(),
    format: WebhookFormat,
    /** Until when the secret before the last rotation still signs too; null when none does. */
    previousSecretExpiresAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "Webhook" });
export type WebhookView = z.infer<typeof WebhookView>;

/** A subscription with its signing secret: answered by create and rotate only. */
export const WebhookWithSecret = WebhookView.extend({
  /** `whsec_…` (Standard Webhooks): shown this once; keep it to verify signatures. */
  secret: z.string().startsWith("whsec_"),
}).meta({ id: "WebhookWithSecret" });
export type WebhookWithSecret = z.infer<typeof WebhookWithSecret>;

export const WebhookList = z.object({ webhooks: z.array(WebhookView) }).meta({ id: "WebhookList" });

export const WebhookAttemptView = z
  .object({
    attempt: z.number().int(),
    statusCode: z.number().int().nullable(),
    /** null on success; http_3xx, http_4xx, http_5xx, timeout, network, non_public_address, no_signing_key. */
    errorClass: z.string().nullable(),
    error: z.string().nullable(),
    durationMs: z.number().int(),
    /** At most 1 KiB of the receiver's answer. */
    responseBody: z.string(),
    at: z.iso.datetime(),
  })
  .meta({ id: "WebhookAttempt" });

export const WebhookDeliveryView = z
  .object({
    id: z.uuid(),
    webhookId: z.uuid(),
    messageId: z.string(),
    eventType: WebhookEventType,
    status: z.enum(["pending", "succeeded", "failed"]),
    attempts: z.number().int(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    nextAttemptAt: z.iso.datetime().nullable(),
    deliveredAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
    payload: z.unknown(),
    /** The latest attempts, newest first. */
    attemptLog: z.array(WebhookAttemptView),
  })
  .meta({ id: "WebhookDelivery" });
export type WebhookDeliveryView = z.infer<typeof WebhookDeliveryView>;

export const WebhookDeliveryList = z
  .object({ deliveries: z.array(WebhookDeliveryView) })
  .meta({ id: "WebhookDeliveryList" });

export const ListWebhookDeliveriesQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(50),
    status: z.enum(["pending", "succeeded", "failed"]).optional(),
  })
  .strict();

export function toWebhookView(row: {
  id: string;
  url: string;
  description: string;
  eventTypes: string[];
  enabled: boolean;
  format: WebhookFormat;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}): WebhookView {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: row.eventTypes.filter((t): t is WebhookEventType =>
      (WEBHOOK_EVENT_TYPES as readonly string[]).includes(t),
    ),
    enabled: row.enabled,
    format: row.format,
    previousSecretExpiresAt:
      row.previousSecretExpiresAt && row.previousSecretExpiresAt > new Date()
        ? row.previousSecretExpiresAt.toISOString()
        : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
