import { ControlPlaneHealth, getControlPlaneHealth } from "@thaw/core";
import { protectedProcedure, router } from "../init.ts";

export const systemRouter = router({
  health: protectedProcedure
    .output(ControlPlaneHealth)
    .query(({ ctx }) => getControlPlaneHealth({ actor: ctx.actor, db: ctx.db })),
});
