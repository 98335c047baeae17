import { AuditLogPage, listAuditLog, ListAuditLogInput } from "@thaw/core";
import { coreInput } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

export const auditRouter = router({
  list: protectedProcedure
    .input(coreInput(ListAuditLogInput))
    .output(AuditLogPage)
    .query(({ ctx, input }) => listAuditLog({ actor: ctx.actor, input, db: ctx.db })),
});
