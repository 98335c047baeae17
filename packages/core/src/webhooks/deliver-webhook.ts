import type { DbClient } from "@thaw/db";
import { FetchRefusedError, fetchPublic } from "../net/public-fetch.ts";
import { slackMessage } from "./slack-message.ts";
import { openWebhookSecret, signWebhook } from "./webhook-secret.ts";
import type { WebhookConfig } from "./webhook-url-policy.ts";

// One attempt at one delivery (the webhook-delivery worker's job): the payload POSTed to the
// subscription's URL, signed per Standard Webhooks with the current secret (and the previous
// one while it still signs), through fetchPublic — every address the name resolves to is
// checked at connect time, so a URL that passed the create-time check and now resolves to a
// private or metadata address is refused. The attempt is recorded whatever happens.

export const WEBHOOK_TIMEOUT_MS = 10_000;
/** The receiver's answer kept for the delivery log. */
export const WEBHOOK_RESPONSE_KEPT_BYTES = 1024;

export type DeliveryOutcome =
  /** The receiver answered 2xx. */
  | "succeeded"
  /** Worth trying again (5xx, 408, 429, timeout, network): the worker retries with backoff. */
  | "retry"
  /** Final: a 3xx or 4xx, a refused address, the last attempt's failure, or the subscription is gone. */
  | "failed"
  /** Nothing to do: no such delivery, or it is not pending. */
  | "skipped";

export async function deliverWebhook({
  db,
  deliveryId,
  config,
  retryInMs,
  timeoutMs = WEBHOOK_TIMEOUT_MS,
  now = () => new Date(),
}: {
  db: DbClient;
  deliveryId: string;
  config: WebhookConfig;
  /** When the next attempt would be if this one fails retryably; null: this is the last. */
  retryInMs: number | null;
  timeoutMs?: number;
  now?: () => Date;
}): Promise<{ outcome: DeliveryOutcome; attempt?: number; statusCode?: number | null }> {
  const delivery = await db.webhookDelivery.findUnique({
    where: { id: deliveryId },
    include: { subscription: true },
  });
  if (!delivery || delivery.status !== "pending") return { outcome: "skipped" };
  const sub = delivery.subscription;
  const attempt = delivery.attempts + 1;
  const started = Date.now();
  let statusCode: number | null = null;
  let errorClass: string | null = null;
  let error: string | null = null;
  let responseBody = "";
  let verdict: "succeeded" | "retry" | "failed";
  const sentAt = now();
  const secrets = config.sealingKey ? openSecrets(sub, config.sealingKey, sentAt) : null;

  if (!sub.enabled) {
    verdict = "failed";
    errorClass = "disabled";
    error = "the subscription is disabled";
  } else if (!config.sealingKey) {
    verdict = "retry";
    errorClass = "no_signing_key";
    error = "THAW_CREDENTIALS_KEY is not set: nothing to sign with";
  } else if (!secrets) {
    // Sealed under another key (THAW_CREDENTIALS_KEY changed): no retry can sign it.
    verdict = "failed";
    errorClass = "secret_unopenable";
    error = "the signing secret does not open under THAW_CREDENTIALS_KEY: rotate it";
  } else {
    // A Slack-format subscription gets the event as a chat message; it is signed all the same.
    const body = JSON.stringify(
      sub.format === "slack" ? slackMessage(delivery.payload) : delivery.payload,
    );
    try {
      const answer = await fetchPublic(sub.url, {
        method: "POST",
        body,
        headers: {
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          "user-agent": "thaw-webhooks",
          "webhook-id": delivery.messageId,
          "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
          "webhook-signature": signWebhook(secrets, delivery.messageId, sentAt, body),
        },
        timeoutMs,
        maxBodyBytes: WEBHOOK_RESPONSE_KEPT_BYTES,
        overflow: "truncate",
        redirect: "manual",
        trustedHosts: config.trustedHosts,
      });
      statusCode = answer.status;
      responseBody = answer.body.toString("utf8");
      verdict = classifyStatus(answer.status);
      if (verdict !== "succeeded") {
        errorClass = `http_${Math.floor(answer.status / 100)}xx`;
        error = `the receiver answered ${answer.status}`;
      }
    } catch (caught) {
      if (!(caught instanceof FetchRefusedError)) throw caught;
      errorClass = caught.reason.replaceAll("-", "_");
      error = caught.message.slice(0, 500);
      verdict = caught.reason === "timeout" || caught.reason === "network" ? "retry" : "failed";
    }
  }
  if (verdict === "retry" && retryInMs === null) verdict = "failed";
  const durationMs = Date.now() - started;
  const at = now();
  await db.$transaction(async (tx) => {
    // The attempt number is claimed with the row: two workers on one delivery cannot both record.
    const { count } = await tx.webhookDelivery.updateMany({
      where: { id: delivery.id, attempts: delivery.attempts, status: "pending" },
      data: {
        attempts: attempt,
        status: verdict === "retry" ? "pending" : verdict,
        lastStatusCode: statusCode,
        lastError: error,
        nextAttemptAt: verdict === "retry" ? new Date(at.getTime() + (retryInMs ?? 0)) : null,
        ...(verdict === "succeeded" && { deliveredAt: at }),
      },
    });
    if (count === 0) return;
    await tx.webhookAttempt.create({
      data: {
        deliveryId: delivery.id,
        attempt,
        statusCode,
        errorClass,
        error,
        durationMs,
        responseBody: responseBody.replaceAll("\u0000", ""),
        at,
      },
    });
  });
  return { outcome: verdict, attempt, statusCode };
}

/** The current secret, and the previous one while it still signs; null when they do not open. */
function openSecrets(
  sub: {
    id: string;
    orgId: string;
    sealedSecret: string;
    previousSealedSecret: string | null;
    previousSecretExpiresAt: Date | null;
  },
  key: Buffer,
  at: Date,
): string[] | null {
  try {
    const secrets = [openWebhookSecret(sub.sealedSecret, key, sub.orgId, sub.id)];
    if (sub.previousSealedSecret && sub.previousSecretExpiresAt && sub.previousSecretExpiresAt > at)
      secrets.push(openWebhookSecret(sub.previousSealedSecret, key, sub.orgId, sub.id));
    return secrets;
  } catch {
    return null;
  }
}

/** 2xx ends it; 408, 429 and 5xx are worth another try; any other answer is final. */
export function classifyStatus(status: number): "succeeded" | "retry" | "failed" {
  if (status >= 200 && status < 300) return "succeeded";
  if (status === 408 || status === 429 || status >= 500) return "retry";
  return "failed";
}
