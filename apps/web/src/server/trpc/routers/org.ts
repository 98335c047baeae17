import { getOrgQuotaUsage } from "@thaw/core";
import { orgQuotas } from "../../org-quotas.ts";
import { protectedProcedure, router } from "../init.ts";

export const orgRouter = router({
  quotas: protectedProcedure.query(({ ctx }) =>
    getOrgQuotaUsage({ actor: ctx.actor, db: ctx.db, defaults: orgQuotas() }),
  ),
});
