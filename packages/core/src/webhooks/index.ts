export { createWebhookSubscription } from "./create-webhook-subscription.ts";
export { deleteWebhookSubscription } from "./delete-webhook-subscription.ts";
export {
  classifyStatus,
  deliverWebhook,
  WEBHOOK_RESPONSE_KEPT_BYTES,
  WEBHOOK_TIMEOUT_MS,
  type DeliveryOutcome,
} from "./deliver-webhook.ts";
export {
  findStalledWebhookDeliveries,
  WEBHOOK_DELIVERY_OVERDUE_MS,
} from "./find-stalled-webhook-deliveries.ts";
export { getWebhookSubscription } from "./get-webhook-subscription.ts";
export { listWebhookDeliveries } from "./list-webhook-deliveries.ts";
export { listWebhookSubscriptions } from "./list-webhook-subscriptions.ts";
export { recordCapacityFallback } from "./record-capacity-fallback.ts";
export { recordColdStartWebhookEvents } from "./record-cold-start-webhook-events.ts";
export { recordSpendCapState } from "./record-spend-cap-state.ts";
export {
  recordWebhookEvents,
  webhookDeliveryFollowUps,
  webhookMessageId,
  type WebhookEvent,
} from "./record-webhook-event.ts";
export { redeliverWebhook } from "./redeliver-webhook.ts";
export { rotateWebhookSecret } from "./rotate-webhook-secret.ts";
export { updateWebhookSubscription } from "./update-webhook-subscription.ts";
export {
  CreateWebhookInput,
  ListWebhookDeliveriesQuery,
  UpdateWebhookInput,
  WEBHOOK_EVENT_TYPES,
  WebhookAttemptView,
  WebhookDeliveryList,
  WebhookDeliveryView,
  WebhookEventType,
  WebhookFormat,
  WebhookId,
  WebhookList,
  WebhookUrl,
  WebhookView,
  WebhookWithSecret,
} from "./webhook-spec.ts";
export { PREVIOUS_SECRET_SIGNS_FOR_MS, signWebhook } from "./webhook-secret.ts";
export { webhookUrlProblem, type WebhookConfig } from "./webhook-url-policy.ts";
export { webhookTrustedHostsEnv } from "./webhook-env.ts";
