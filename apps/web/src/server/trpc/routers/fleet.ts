import {
  createJoinToken,
  drainNode,
  listNodes,
  revokeNode,
  rotateNodeCredential,
} from "@thaw/core";
import { z } from "zod";
import { followThrough } from "../../follow-through.ts";
import { protectedProcedure, router } from "../init.ts";

const NodeAction = z
  .object({
    nodeId: z.uuid({ message: "expected a node id (UUID)" }),
    reason: z.string().trim().max(200).optional(),
  })
  .strict();

export const fleetRouter = router({
  nodes: protectedProcedure.query(({ ctx }) => listNodes({ actor: ctx.actor, db: ctx.db })),

  /** A one-time join token; with `nodeId`, one that lets that node's host join again. */
  createJoinToken: protectedProcedure
    .input(
      z
        .object({
          ttlSeconds: z
            .number()
            .int()
            .min(60)
            .max(7 * 24 * 3600)
            .default(3600),
          nodeId: z.uuid({ message: "expected a node id (UUID)" }).optional(),
        })
        .strict(),
    )
    .mutation(({ ctx, input }) => createJoinToken({ actor: ctx.actor, input, db: ctx.db })),

  /** The node's agent fetches a new credential at its next heartbeat. */
  rotateCredential: protectedProcedure
    .input(NodeAction.pick({ nodeId: true }))
    .mutation(({ ctx, input }) =>
      rotateNodeCredential({ actor: ctx.actor, input: { node: input.nodeId }, db: ctx.db }),
    ),

  /** No credential of the node is accepted any more; it is drained. */
  revoke: protectedProcedure.input(NodeAction).mutation(async ({ ctx, input }) => {
    const result = await revokeNode({
      actor: ctx.actor,
      input: { node: input.nodeId, reason: input.reason },
      db: ctx.db,
    });
    return followThrough(result);
  }),

  /** Nothing new is placed on the node; its replicas are replaced elsewhere. */
  drain: protectedProcedure.input(NodeAction).mutation(async ({ ctx, input }) => {
    const result = await drainNode({
      actor: ctx.actor,
      input: { node: input.nodeId, reason: input.reason },
      db: ctx.db,
    });
    return followThrough(result);
  }),
});
