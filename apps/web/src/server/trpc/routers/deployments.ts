import {
  createDeployment,
  type DeploymentSpec,
  listDeployments,
  type ListDeploymentsQuery,
} from "@thaw/core";
import type { z } from "zod";
import { followThrough } from "../../follow-through.ts";
import { coreInput, member, type EndpointAnd } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

export const deploymentsRouter = router({
  create: protectedProcedure
    .input(coreInput<EndpointAnd<"deployment", typeof DeploymentSpec>>())
    .mutation(async ({ ctx, input }) => {
      const deployment = await createDeployment({
        actor: ctx.actor,
        endpoint: member(input, "endpoint"),
        input: member(input, "deployment"),
        where: "deployment",
        db: ctx.db,
      });
      return followThrough(deployment);
    }),
  list: protectedProcedure
    .input(coreInput<{ endpoint: string } & z.input<typeof ListDeploymentsQuery>>())
    .query(({ ctx, input }) => {
      const { endpoint, ...query } = (input ?? {}) as Record<string, unknown>;
      return listDeployments({ actor: ctx.actor, endpoint, input: query, db: ctx.db });
    }),
});
