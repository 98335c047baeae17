import { deliverWebhook, QUEUES } from "@thaw/core";
import type { Job } from "bullmq";
import type { WorkerContext } from "./worker-context.ts";

const NO_WEBHOOKS = { sealingKey: null, trustedHosts: new Set<string>() };

/**
 * webhook-delivery: one attempt at one delivery, recorded in its log. A retryable failure
 * (5xx, 408, 429, timeout, network) throws, so BullMQ tries again after the contract's
 * backoff; a 2xx, a final 4xx or the last attempt ends the job.
 */
export async function processWebhookDelivery(
  ctx: WorkerContext,
  data: unknown,
  job?: Job,
): Promise<unknown> {
  const { deliveryId } = QUEUES.webhookDelivery.payload.parse(data);
  const attempts = job?.opts.attempts ?? 1;
  const made = job?.attemptsMade ?? 0;
  const result = await deliverWebhook({
    db: ctx.db,
    deliveryId,
    config: ctx.webhooks ?? NO_WEBHOOKS,
    retryInMs: made + 1 < attempts ? nextDelayMs(job, made) : null,
  });
  if (result.outcome === "retry") {
    ctx.log.info(
      { deliveryId, attempt: result.attempt, statusCode: result.statusCode },
      "webhook delivery failed; will retry",
    );
    throw new Error(`webhook delivery ${deliveryId}: attempt ${result.attempt} failed, retrying`);
  }
  return { deliveryId, outcome: result.outcome, attempt: result.attempt };
}

/** The delay BullMQ's exponential backoff will wait before the next attempt (for the log). */
function nextDelayMs(job: Job | undefined, made: number): number {
  const backoff = job?.opts.backoff;
  if (!backoff || typeof backoff === "number") return backoff ?? 0;
  const delay = backoff.delay ?? 0;
  return backoff.type === "exponential" ? delay * 2 ** made : delay;
}
