import {
  getOrgQuotaUsage,
  getOrgSettings,
  setOrgSettings,
  type SetOrgSettingsInput,
} from "@thaw/core";
import { orgQuotas } from "../../org-quotas.ts";
import { coreInput } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

export const orgRouter = router({
  quotas: protectedProcedure.query(({ ctx }) =>
    getOrgQuotaUsage({ actor: ctx.actor, db: ctx.db, defaults: orgQuotas() }),
  ),
  /** The org's default price of waiting and warm-pool GPU budget (admins and owners). */
  settings: protectedProcedure.query(({ ctx }) => getOrgSettings({ actor: ctx.actor, db: ctx.db })),
  setSettings: protectedProcedure
    .input(coreInput<SetOrgSettingsInput>())
    .mutation(({ ctx, input }) => setOrgSettings({ actor: ctx.actor, input, db: ctx.db })),
});
