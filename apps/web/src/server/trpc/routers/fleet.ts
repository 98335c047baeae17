import { createJoinToken, listNodes } from "@thaw/core";
import { z } from "zod";
import { protectedProcedure, router } from "../init.ts";

export const fleetRouter = router({
  nodes: protectedProcedure.query(({ ctx }) => listNodes({ actor: ctx.actor, db: ctx.db })),

  createJoinToken: protectedProcedure
    .input(
      z
        .object({
          ttlSeconds: z
            .number()
            .int()
            .min(60)
            .max(7 * 24 * 3600)
            .default(3600),
        })
        .strict(),
    )
    .mutation(({ ctx, input }) => createJoinToken({ actor: ctx.actor, input, db: ctx.db })),
});
