import {
  createDeployment,
  CreateDeploymentRequest,
  DeploymentList,
  DeploymentView,
  listDeployments,
  ListDeploymentsRequest,
} from "@thaw/core";
import { followThrough } from "../../follow-through.ts";
import { coreInput } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

export const deploymentsRouter = router({
  create: protectedProcedure
    .input(coreInput(CreateDeploymentRequest, ""))
    .output(DeploymentView)
    .mutation(async ({ ctx, input }) =>
      followThrough(
        await createDeployment({
          actor: ctx.actor,
          endpoint: input.endpoint,
          input: input.deployment,
          where: "deployment",
          db: ctx.db,
        }),
      ),
    ),
  list: protectedProcedure
    .input(coreInput(ListDeploymentsRequest, ""))
    .output(DeploymentList)
    .query(({ ctx, input: { endpoint, ...query } }) =>
      listDeployments({ actor: ctx.actor, endpoint, input: query, db: ctx.db }),
    ),
});
