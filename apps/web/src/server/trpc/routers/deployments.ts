import {
  ArtifactsInspectionView,
  createDeployment,
  inspectArtifacts,
  InspectArtifactsRequest,
  CreateDeploymentRequest,
  DeploymentList,
  DeploymentView,
  listDeployments,
  ListDeploymentsRequest,
} from "@thaw/core";
import { artifactInspector } from "../../artifact-inspector.ts";
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
          inspector: artifactInspector(),
        }),
      ),
    ),
  /** What a deployment of this image and model would be made from: the wizard's inspection step. */
  inspect: protectedProcedure
    .input(coreInput(InspectArtifactsRequest, "deployment"))
    .output(ArtifactsInspectionView)
    .mutation(({ ctx, input }) =>
      inspectArtifacts({
        actor: ctx.actor,
        input,
        inspector: artifactInspector(),
        where: "deployment",
      }),
    ),
  list: protectedProcedure
    .input(coreInput(ListDeploymentsRequest, ""))
    .output(DeploymentList)
    .query(({ ctx, input: { endpoint, ...query } }) =>
      listDeployments({ actor: ctx.actor, endpoint, input: query, db: ctx.db }),
    ),
});
