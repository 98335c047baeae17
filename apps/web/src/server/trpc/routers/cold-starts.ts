import {
  ColdStartListItems,
  ColdStartView,
  getColdStart,
  GetColdStartInput,
  listColdStarts,
  ListColdStartsInput,
} from "@thaw/core";
import { coreInput } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

export const coldStartsRouter = router({
  list: protectedProcedure
    .input(coreInput(ListColdStartsInput))
    .output(ColdStartListItems)
    .query(({ ctx, input }) => listColdStarts({ actor: ctx.actor, input, db: ctx.db })),
  get: protectedProcedure
    .input(coreInput(GetColdStartInput))
    .output(ColdStartView)
    .query(({ ctx, input }) => getColdStart({ actor: ctx.actor, input, db: ctx.db })),
});
