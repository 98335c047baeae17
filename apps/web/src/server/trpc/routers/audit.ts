import { listAuditLog, ListAuditLogInput } from "@thaw/core";
import { protectedProcedure, router } from "../init.ts";

export const auditRouter = router({
  list: protectedProcedure
    .input(ListAuditLogInput)
    .query(({ ctx, input }) => listAuditLog({ actor: ctx.actor, input, db: ctx.db })),
});
