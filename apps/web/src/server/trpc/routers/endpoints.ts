import { listEndpoints } from "@thaw/core";
import { protectedProcedure, router } from "../init.ts";

export const endpointsRouter = router({
  list: protectedProcedure.query(({ ctx }) => listEndpoints({ actor: ctx.actor, db: ctx.db })),
});
