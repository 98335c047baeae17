import {
  createEndpoint,
  CreateEndpointInput,
  deleteEndpoint,
  DeleteEndpointRequest,
  DeletedEndpoint,
  EndpointTable,
  EndpointView,
  listEndpoints,
  updateEndpoint,
  UpdateEndpointRequest,
} from "@thaw/core";
import { artifactInspector } from "../../artifact-inspector.ts";
import { followThrough } from "../../follow-through.ts";
import { orgQuotas } from "../../org-quotas.ts";
import { coreInput } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

export const endpointsRouter = router({
  list: protectedProcedure
    .output(EndpointTable)
    .query(({ ctx }) => listEndpoints({ actor: ctx.actor, db: ctx.db })),
  create: protectedProcedure
    .input(coreInput(CreateEndpointInput))
    .output(EndpointView)
    .mutation(async ({ ctx, input }) =>
      followThrough(
        await createEndpoint({
          actor: ctx.actor,
          input,
          source: "dashboard",
          db: ctx.db,
          quotas: orgQuotas(),
          inspector: artifactInspector(),
        }),
      ),
    ),
  update: protectedProcedure
    .input(coreInput(UpdateEndpointRequest, ""))
    .output(EndpointView)
    .mutation(async ({ ctx, input }) =>
      followThrough(
        await updateEndpoint({
          actor: ctx.actor,
          endpoint: input.endpoint,
          input: input.changes,
          where: "changes",
          source: "dashboard",
          db: ctx.db,
          quotas: orgQuotas(),
        }),
      ),
    ),
  delete: protectedProcedure
    .input(coreInput(DeleteEndpointRequest, ""))
    .output(DeletedEndpoint)
    .mutation(async ({ ctx, input }) =>
      followThrough(
        await deleteEndpoint({
          actor: ctx.actor,
          endpoint: input.endpoint,
          source: "dashboard",
          db: ctx.db,
        }),
      ),
    ),
});
