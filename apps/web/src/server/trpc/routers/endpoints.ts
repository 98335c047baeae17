import {
  createEndpoint,
  type CreateEndpointInput,
  deleteEndpoint,
  listEndpoints,
  updateEndpoint,
  type UpdateEndpointInput,
} from "@thaw/core";
import type { z } from "zod";
import { orgQuotas } from "../../org-quotas.ts";
import { followThrough } from "../../follow-through.ts";
import { coreInput, member, type EndpointAnd } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

export const endpointsRouter = router({
  list: protectedProcedure.query(({ ctx }) => listEndpoints({ actor: ctx.actor, db: ctx.db })),
  create: protectedProcedure
    .input(coreInput<z.input<typeof CreateEndpointInput>>())
    .mutation(async ({ ctx, input }) => {
      const created = await createEndpoint({
        actor: ctx.actor,
        input,
        source: "dashboard",
        db: ctx.db,
        quotas: orgQuotas(),
      });
      return followThrough(created);
    }),
  update: protectedProcedure
    .input(coreInput<EndpointAnd<"changes", typeof UpdateEndpointInput>>())
    .mutation(async ({ ctx, input }) => {
      const updated = await updateEndpoint({
        actor: ctx.actor,
        endpoint: member(input, "endpoint"),
        input: member(input, "changes"),
        where: "changes",
        source: "dashboard",
        db: ctx.db,
        quotas: orgQuotas(),
      });
      return followThrough(updated);
    }),
  delete: protectedProcedure
    .input(coreInput<{ endpoint: string }>())
    .mutation(async ({ ctx, input }) => {
      const endpoint = member(input, "endpoint");
      const deleted = await deleteEndpoint({
        actor: ctx.actor,
        endpoint,
        source: "dashboard",
        db: ctx.db,
      });
      return followThrough(deleted);
    }),
});
