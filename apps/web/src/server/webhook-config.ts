import type { WebhookConfig } from "@thaw/core";
import { env } from "../env.ts";
import { sealingKey } from "./sealing-key.ts";

let trusted: ReadonlySet<string> | undefined;

/** THAW_CREDENTIALS_KEY seals webhook secrets; THAW_WEBHOOK_TRUSTED_HOSTS names internal receivers. */
export function webhookConfig(): WebhookConfig {
  trusted ??= new Set(env().THAW_WEBHOOK_TRUSTED_HOSTS);
  return { sealingKey: sealingKey(), trustedHosts: trusted };
}
