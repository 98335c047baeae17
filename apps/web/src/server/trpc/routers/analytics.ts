import {
  getEndpointGpuCost,
  GetEndpointGpuCostInput,
  getOrgGpuCost,
  GpuCostQuery,
  GpuCostReport,
  DeploymentBreakdown,
  EndpointDetail,
  getDeploymentBreakdown,
  GetDeploymentBreakdownInput,
  getEndpointDetail,
  GetEndpointDetailInput,
  getEndpointWhatIf,
  GetEndpointWhatIfInput,
  WhatIfReport,
} from "@thaw/core";
import { coreInput } from "../core-input.ts";
import { runWhatIfInScheduler } from "../../what-if-runner.ts";
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
  /** GPU-seconds and dollars by what the GPUs were doing: one endpoint's, or the org's. */
  endpointCost: protectedProcedure
    .input(coreInput(GetEndpointGpuCostInput))
    .output(GpuCostReport)
    .query(({ ctx, input: { endpoint, ...query } }) =>
      getEndpointGpuCost({ actor: ctx.actor, endpoint, input: query, db: ctx.db, where: "input" }),
    ),
  /** The endpoint's recorded load replayed under thaw's prices and fixed keep-alives (the scheduler replays). */
  endpointWhatIf: protectedProcedure
    .input(coreInput(GetEndpointWhatIfInput))
    .output(WhatIfReport)
    .query(({ ctx, input: { endpoint, ...query } }) =>
      getEndpointWhatIf({
        actor: ctx.actor,
        endpoint,
        input: query,
        db: ctx.db,
        run: runWhatIfInScheduler,
        where: "input",
      }),
    ),
  orgCost: protectedProcedure
    .input(coreInput(GpuCostQuery))
    .output(GpuCostReport)
    .query(({ ctx, input }) =>
      getOrgGpuCost({ actor: ctx.actor, input, db: ctx.db, where: "input" }),
    ),
});
