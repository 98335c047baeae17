import { getControlPlaneHealth } from "@thaw/core";
import { protectedProcedure, router } from "../init.ts";

export const systemRouter = router({
  health: protectedProcedure.query(({ ctx }) =>
    getControlPlaneHealth({ actor: ctx.actor, db: ctx.db }),
  ),
});
