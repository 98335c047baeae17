import { describeSession, SessionView } from "@thaw/core";
import { authedProcedure } from "../init.ts";

/** The signed-in user, their orgs, and the org (and role) this session acts in. */
export const meProcedure = authedProcedure
  .output(SessionView)
  .query(({ ctx }) => describeSession({ user: ctx.user, orgSlug: ctx.orgSlug, db: ctx.db }));
