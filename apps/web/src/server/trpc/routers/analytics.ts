import {
  getDeploymentBreakdown,
  GetDeploymentBreakdownInput,
  getEndpointDetail,
  GetEndpointDetailInput,
} from "@thaw/core";
import { protectedProcedure, router } from "../init.ts";

/** The read side of the dashboard: an endpoint's page and where its cold starts' seconds went. */
export const analyticsRouter = router({
  endpointDetail: protectedProcedure
    .input(GetEndpointDetailInput)
    .query(({ ctx, input }) => getEndpointDetail({ actor: ctx.actor, input, db: ctx.db })),
  deploymentBreakdown: protectedProcedure
    .input(GetDeploymentBreakdownInput)
    .query(({ ctx, input }) => getDeploymentBreakdown({ actor: ctx.actor, input, db: ctx.db })),
});
