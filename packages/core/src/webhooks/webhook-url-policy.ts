import { nonPublicHostReason } from "../deployments/source-policy.ts";
import { AppError } from "../errors/index.ts";
import { isTrustedHost } from "../net/public-fetch.ts";

/** The operator's side of webhook delivery: the sealing key and the internal receivers trusted. */
export interface WebhookConfig {
  /** THAW_CREDENTIALS_KEY; null: webhooks are off. */
  sealingKey: Buffer | null;
  /** THAW_WEBHOOK_TRUSTED_HOSTS: `host` or `host:port` receivers allowed although private. */
  trustedHosts: ReadonlySet<string>;
}

/**
 * Why a webhook URL may not be delivered to, or null: only https to a public name or address,
 * unless the operator trusts the host (then plain http too). The text is checked here; every
 * address it resolves to is checked again at send time (fetchPublic), against DNS rebinding.
 */
export function webhookUrlProblem(text: string, trusted: ReadonlySet<string>): string | null {
  const url = new URL(text);
  if (isTrustedHost(url, trusted)) return null;
  if (url.protocol !== "https:")
    return "only https:// (plain http only to the operator's trusted hosts)";
  return nonPublicHostReason(url.hostname);
}

export function assertWebhookUrlAllowed(text: string, trusted: ReadonlySet<string>, field: string) {
  const problem = webhookUrlProblem(text, trusted);
  if (problem) throw new AppError("UNPROCESSABLE", `${field}: ${problem}`, { field });
}
