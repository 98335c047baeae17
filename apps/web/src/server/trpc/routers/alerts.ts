import {
  AlertEpisodeList,
  AlertRuleId,
  AlertRuleList,
  AlertRuleView,
  createAlertRule,
  CreateAlertRuleInput,
  deleteAlertRule,
  listAlertEpisodes,
  listAlertRules,
  updateAlertRule,
  UpdateAlertRuleInput,
} from "@thaw/core";
import { z } from "zod";
import { followThrough } from "../../follow-through.ts";
import { coreInput } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

export const alertsRouter = router({
  rules: protectedProcedure
    .output(AlertRuleList)
    .query(({ ctx }) => listAlertRules({ actor: ctx.actor, db: ctx.db })),
  create: protectedProcedure
    .input(coreInput(CreateAlertRuleInput))
    .output(AlertRuleView)
    .mutation(({ ctx, input }) => createAlertRule({ actor: ctx.actor, input, db: ctx.db })),
  update: protectedProcedure
    .input(coreInput(z.object({ id: AlertRuleId, change: UpdateAlertRuleInput }).strict()))
    .output(AlertRuleView)
    .mutation(async ({ ctx, input }) =>
      followThrough(
        await updateAlertRule({
          actor: ctx.actor,
          id: input.id,
          input: input.change,
          db: ctx.db,
          where: "change",
        }),
      ),
    ),
  delete: protectedProcedure
    .input(coreInput(z.object({ id: AlertRuleId }).strict()))
    .output(z.object({ id: z.string(), deleted: z.literal(true) }))
    .mutation(({ ctx, input }) => deleteAlertRule({ actor: ctx.actor, id: input.id, db: ctx.db })),
  episodes: protectedProcedure
    .input(
      coreInput(
        z
          .object({
            state: z.enum(["open", "resolved", "all"]).optional(),
            limit: z.number().int().min(1).max(200).optional(),
            endpoint: z.string().min(1).max(100).optional(),
          })
          .strict(),
      ),
    )
    .output(AlertEpisodeList)
    .query(({ ctx, input }) => listAlertEpisodes({ actor: ctx.actor, query: input, db: ctx.db })),
});
