import {
  getOrgQuotaUsage,
  getOrgSettings,
  OrgQuotaReport,
  OrgSettings,
  setOrgSettings,
  SetOrgSettingsInput,
} from "@thaw/core";
import { orgQuotas } from "../../org-quotas.ts";
import { coreInput } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

export const orgRouter = router({
  quotas: protectedProcedure
    .output(OrgQuotaReport)
    .query(({ ctx }) => getOrgQuotaUsage({ actor: ctx.actor, db: ctx.db, defaults: orgQuotas() })),
  /** The org's default price of waiting and warm-pool GPU budget (admins and owners). */
  settings: protectedProcedure
    .output(OrgSettings)
    .query(({ ctx }) => getOrgSettings({ actor: ctx.actor, db: ctx.db })),
  setSettings: protectedProcedure
    .input(coreInput(SetOrgSettingsInput))
    .output(OrgSettings)
    .mutation(({ ctx, input }) => setOrgSettings({ actor: ctx.actor, input, db: ctx.db })),
});
