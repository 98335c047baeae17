import type { WebhookEventType, WebhookDeliveryView } from "./webhook-spec.ts";

export function toWebhookDeliveryView(row: {
  id: string;
  subscriptionId: string;
  messageId: string;
  eventType: string;
  payload: unknown;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
  attemptLog: {
    attempt: number;
    statusCode: number | null;
    errorClass: string | null;
    error: string | null;
    durationMs: number;
    responseBody: string;
    at: Date;
  }[];
}): WebhookDeliveryView {
  return {
    id: row.id,
    webhookId: row.subscriptionId,
    messageId: row.messageId,
    eventType: row.eventType as WebhookEventType,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    payload: row.payload,
    attemptLog: row.attemptLog.map((a) => ({
      attempt: a.attempt,
      statusCode: a.statusCode,
      errorClass: a.errorClass,
      error: a.error,
      durationMs: a.durationMs,
      responseBody: a.responseBody,
      at: a.at.toISOString(),
    })),
  };
}
