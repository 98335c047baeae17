import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { findWebhookSubscription } from "./find-webhook-subscription.ts";
import { toWebhookView, type WebhookWithSecret } from "./webhook-spec.ts";
import {
  newWebhookSecret,
  PREVIOUS_SECRET_SIGNS_FOR_MS,
  requireWebhookSealingKey,
  sealWebhookSecret,
} from "./webhook-secret.ts";
import type { WebhookConfig } from "./webhook-url-policy.ts";

/**
 * A new signing secret, answered this once. The one it replaces keeps signing beside it for
 * 24 hours (two signatures in `webhook-signature`), so a receiver can switch without a gap.
 */
export async function rotateWebhookSecret({
  actor,
  id,
  db,
  config,
  now = new Date(),
}: {
  actor: Actor;
  id: unknown;
  db: DbClient;
  config: Pick<WebhookConfig, "sealingKey">;
  now?: Date;
}): Promise<WebhookWithSecret> {
  assertCan(actor, "webhooks:manage");
  const key = requireWebhookSealingKey(config.sealingKey);
  const secret = newWebhookSecret();
  return db.$transaction(async (tx) => {
    const found = await findWebhookSubscription(tx, actor, id);
    // Serialise rotations of one subscription: the previous secret is the one read here.
    await tx.$queryRaw`SELECT id FROM "WebhookSubscription" WHERE id = ${found.id}::uuid FOR UPDATE`;
    const current = await tx.webhookSubscription.findUniqueOrThrow({ where: { id: found.id } });
    const row = await tx.webhookSubscription.update({
      where: { id: found.id },
      data: {
        sealedSecret: sealWebhookSecret(secret, key, found.orgId, found.id),
        previousSealedSecret: current.sealedSecret,
        previousSecretExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_SIGNS_FOR_MS),
      },
    });
    await recordAudit(tx, actor, {
      action: "webhook.secret_rotated",
      targetType: "webhook",
      targetId: row.id,
      metadata: { host: new URL(row.url).host },
    });
    return { ...toWebhookView(row), secret };
  });
}
