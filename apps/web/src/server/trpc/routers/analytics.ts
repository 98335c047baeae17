import {
  DeploymentBreakdown,
  EndpointDetail,
  getDeploymentBreakdown,
  GetDeploymentBreakdownInput,
  getEndpointDetail,
  GetEndpointDetailInput,
} from "@thaw/core";
import { coreInput } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

/** The read side of the dashboard: an endpoint's page and where its cold starts' seconds went. */
export const analyticsRouter = router({
  endpointDetail: protectedProcedure
    .input(coreInput(GetEndpointDetailInput))
    .output(EndpointDetail)
    .query(({ ctx, input }) => getEndpointDetail({ actor: ctx.actor, input, db: ctx.db })),
  deploymentBreakdown: protectedProcedure
    .input(coreInput(GetDeploymentBreakdownInput))
    .output(DeploymentBreakdown)
    .query(({ ctx, input }) => getDeploymentBreakdown({ actor: ctx.actor, input, db: ctx.db })),
});
