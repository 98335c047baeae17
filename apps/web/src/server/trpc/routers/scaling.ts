import { setDesiredReplicas, SetDesiredReplicasBody } from "@thaw/core";
import { z } from "zod";
import { followThrough } from "../../follow-through.ts";
import { protectedProcedure, router } from "../init.ts";

export const SetReplicasInput = z
  .object({ endpoint: z.string().min(1).max(100) })
  .extend(SetDesiredReplicasBody.shape)
  .strict();

/** The dashboard's scale control: the same use case as PUT /api/v1/endpoints/{endpoint}/replicas. */
export const scalingRouter = router({
  setReplicas: protectedProcedure.input(SetReplicasInput).mutation(async ({ ctx, input }) => {
    const result = await setDesiredReplicas({
      actor: ctx.actor,
      endpoint: input.endpoint,
      input: { replicas: input.replicas },
      source: "dashboard",
      db: ctx.db,
    });
    return followThrough(result);
  }),
});
