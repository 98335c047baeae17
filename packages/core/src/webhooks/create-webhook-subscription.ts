import { randomUUID } from "node:crypto";
import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { actorIdOf, assertCan, type Actor } from "../auth/index.ts";
import { parseInput } from "../errors/index.ts";
import { CreateWebhookInput, toWebhookView, type WebhookWithSecret } from "./webhook-spec.ts";
import { newWebhookSecret, requireWebhookSealingKey, sealWebhookSecret } from "./webhook-secret.ts";
import { assertWebhookUrlAllowed, type WebhookConfig } from "./webhook-url-policy.ts";

/**
 * Subscribes a URL to some of the org's events. The answer carries the signing secret, this
 * once; the row keeps it sealed, and the audit entry names the host and the event types only
 * (a receiver's URL may carry a token in its path).
 */
export async function createWebhookSubscription({
  actor,
  input,
  db,
  config,
  where = "input",
}: {
  actor: Actor;
  input: unknown;
  db: DbClient;
  config: WebhookConfig;
  where?: string;
}): Promise<WebhookWithSecret> {
  assertCan(actor, "webhooks:manage");
  const spec = parseInput(CreateWebhookInput, input, where);
  assertWebhookUrlAllowed(spec.url, config.trustedHosts, `${where}.url`);
  const key = requireWebhookSealingKey(config.sealingKey);
  const id = randomUUID();
  const secret = newWebhookSecret();
  return db.$transaction(async (tx) => {
    const row = await tx.webhookSubscription.create({
      data: {
        id,
        orgId: actor.orgId,
        url: spec.url,
        description: spec.description ?? "",
        eventTypes: spec.eventTypes,
        enabled: spec.enabled,
        format: spec.format,
        sealedSecret: sealWebhookSecret(secret, key, actor.orgId, id),
        createdById: actorIdOf(actor),
      },
    });
    await recordAudit(tx, actor, {
      action: "webhook.created",
      targetType: "webhook",
      targetId: row.id,
      metadata: { host: new URL(row.url).host, eventTypes: row.eventTypes },
    });
    return { ...toWebhookView(row), secret };
  });
}
