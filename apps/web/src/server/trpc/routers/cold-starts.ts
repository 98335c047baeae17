import { getColdStart, GetColdStartInput, listColdStarts, ListColdStartsInput } from "@thaw/core";
import { protectedProcedure, router } from "../init.ts";

export const coldStartsRouter = router({
  list: protectedProcedure
    .input(ListColdStartsInput)
    .query(({ ctx, input }) => listColdStarts({ actor: ctx.actor, input, db: ctx.db })),
  get: protectedProcedure
    .input(GetColdStartInput)
    .query(({ ctx, input }) => getColdStart({ actor: ctx.actor, input, db: ctx.db })),
});
