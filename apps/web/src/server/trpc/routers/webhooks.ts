import {
  CreateWebhookInput,
  createWebhookSubscription,
  deleteWebhookSubscription,
  listWebhookDeliveries,
  listWebhookSubscriptions,
  redeliverWebhook,
  rotateWebhookSecret,
  UpdateWebhookInput,
  updateWebhookSubscription,
  WebhookDeliveryList,
  WebhookDeliveryView,
  WebhookId,
  WebhookList,
  WebhookView,
  WebhookWithSecret,
} from "@thaw/core";
import { z } from "zod";
import { followThrough } from "../../follow-through.ts";
import { webhookConfig } from "../../webhook-config.ts";
import { coreInput } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

const ById = z.object({ id: WebhookId }).strict();

export const webhooksRouter = router({
  list: protectedProcedure
    .output(WebhookList)
    .query(({ ctx }) => listWebhookSubscriptions({ actor: ctx.actor, db: ctx.db })),
  create: protectedProcedure
    .input(coreInput(CreateWebhookInput))
    .output(WebhookWithSecret)
    .mutation(({ ctx, input }) =>
      createWebhookSubscription({ actor: ctx.actor, input, db: ctx.db, config: webhookConfig() }),
    ),
  update: protectedProcedure
    .input(coreInput(z.object({ id: WebhookId, change: UpdateWebhookInput }).strict()))
    .output(WebhookView)
    .mutation(({ ctx, input }) =>
      updateWebhookSubscription({
        actor: ctx.actor,
        id: input.id,
        input: input.change,
        db: ctx.db,
        config: webhookConfig(),
        where: "change",
      }),
    ),
  delete: protectedProcedure
    .input(coreInput(ById))
    .output(z.object({ id: z.string(), deleted: z.literal(true) }))
    .mutation(({ ctx, input }) =>
      deleteWebhookSubscription({ actor: ctx.actor, id: input.id, db: ctx.db }),
    ),
  rotateSecret: protectedProcedure
    .input(coreInput(ById))
    .output(WebhookWithSecret)
    .mutation(({ ctx, input }) =>
      rotateWebhookSecret({ actor: ctx.actor, id: input.id, db: ctx.db, config: webhookConfig() }),
    ),
  deliveries: protectedProcedure
    .input(
      coreInput(
        z
          .object({
            id: WebhookId,
            limit: z.number().int().min(1).max(100).optional(),
            status: z.enum(["pending", "succeeded", "failed"]).optional(),
          })
          .strict(),
      ),
    )
    .output(WebhookDeliveryList)
    .query(({ ctx, input }) =>
      listWebhookDeliveries({
        actor: ctx.actor,
        id: input.id,
        query: { limit: input.limit, status: input.status },
        db: ctx.db,
      }),
    ),
  redeliver: protectedProcedure
    .input(coreInput(z.object({ deliveryId: WebhookId }).strict()))
    .output(WebhookDeliveryView)
    .mutation(async ({ ctx, input }) =>
      followThrough(
        await redeliverWebhook({ actor: ctx.actor, deliveryId: input.deliveryId, db: ctx.db }),
      ),
    ),
});
