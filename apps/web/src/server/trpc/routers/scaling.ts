import {
  setDesiredReplicas,
  SetDesiredReplicasRequest,
  SetDesiredReplicasResponse,
} from "@thaw/core";
import { followThrough } from "../../follow-through.ts";
import { coreInput } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

/** The dashboard's scale control: the same use case as PUT /api/v1/endpoints/{endpoint}/replicas. */
export const scalingRouter = router({
  setReplicas: protectedProcedure
    .input(coreInput(SetDesiredReplicasRequest, ""))
    .output(SetDesiredReplicasResponse)
    .mutation(async ({ ctx, input }) =>
      followThrough(
        await setDesiredReplicas({
          actor: ctx.actor,
          endpoint: input.endpoint,
          input: { replicas: input.replicas },
          source: "dashboard",
          db: ctx.db,
        }),
      ),
    ),
});
