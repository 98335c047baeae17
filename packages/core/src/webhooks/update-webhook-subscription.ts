import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { parseInput } from "../errors/index.ts";
import { findWebhookSubscription } from "./find-webhook-subscription.ts";
import { toWebhookView, UpdateWebhookInput, type WebhookView } from "./webhook-spec.ts";
import { assertWebhookUrlAllowed, type WebhookConfig } from "./webhook-url-policy.ts";

/** Changes a subscription's URL, description, event types or whether it is enabled. */
export async function updateWebhookSubscription({
  actor,
  id,
  input,
  db,
  config,
  where = "input",
}: {
  actor: Actor;
  id: unknown;
  input: unknown;
  db: DbClient;
  config: Pick<WebhookConfig, "trustedHosts">;
  where?: string;
}): Promise<WebhookView> {
  assertCan(actor, "webhooks:manage");
  const change = parseInput(UpdateWebhookInput, input, where);
  if (change.url) assertWebhookUrlAllowed(change.url, config.trustedHosts, `${where}.url`);
  return db.$transaction(async (tx) => {
    const found = await findWebhookSubscription(tx, actor, id);
    const row = await tx.webhookSubscription.update({
      where: { id: found.id },
      data: {
        ...(change.url !== undefined && { url: change.url }),
        ...(change.description !== undefined && { description: change.description }),
        ...(change.eventTypes !== undefined && { eventTypes: change.eventTypes }),
        ...(change.enabled !== undefined && { enabled: change.enabled }),
        ...(change.format !== undefined && { format: change.format }),
      },
    });
    await recordAudit(tx, actor, {
      action: "webhook.updated",
      targetType: "webhook",
      targetId: row.id,
      metadata: {
        host: new URL(row.url).host,
        eventTypes: row.eventTypes,
        enabled: row.enabled,
        changed: Object.keys(change),
      },
    });
    return toWebhookView(row);
  });
}
