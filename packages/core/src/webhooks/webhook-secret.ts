import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { openSealedSecret, sealSecret } from "../registry-credentials/sealed-secret.ts";
import { AppError } from "../errors/index.ts";

// A subscription's signing secret: `whsec_` and 32 random bytes in base64 (Standard Webhooks),
// sealed at rest like registry credentials (AES-256-GCM under THAW_CREDENTIALS_KEY) and bound
// to its org and subscription, so a sealed value copied onto another row does not open.

/** How long the secret before a rotation keeps signing beside the new one. */
export const PREVIOUS_SECRET_SIGNS_FOR_MS = 24 * 3600 * 1000;

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

export const webhookSecretBinding = (orgId: string, subscriptionId: string) =>
  `webhook-secret:${orgId}:${subscriptionId}`;

export function sealWebhookSecret(
  secret: string,
  key: Buffer,
  orgId: string,
  subscriptionId: string,
): string {
  return sealSecret(secret, key, webhookSecretBinding(orgId, subscriptionId));
}

export function openWebhookSecret(
  sealed: string,
  key: Buffer,
  orgId: string,
  subscriptionId: string,
): string {
  return openSealedSecret(sealed, key, webhookSecretBinding(orgId, subscriptionId));
}

/** Webhooks need THAW_CREDENTIALS_KEY: without it no secret can be kept to sign with. */
export function requireWebhookSealingKey(key: Buffer | null | undefined): Buffer {
  if (key) return key;
  throw new AppError(
    "UNAVAILABLE",
    "Webhooks are off: the operator has not set THAW_CREDENTIALS_KEY (base64 of 32 random bytes).",
  );
}

/**
 * The `webhook-signature` header's value: `v1,<base64 HMAC-SHA256>` under each secret, space
 * separated (the spec's form for a rotation, when receivers may hold either secret).
 */
export function signWebhook(
  secrets: readonly string[],
  messageId: string,
  timestamp: Date,
  body: string,
): string {
  return secrets.map((secret) => new Webhook(secret).sign(messageId, timestamp, body)).join(" ");
}
