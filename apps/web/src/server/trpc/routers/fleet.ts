import {
  CreatedJoinToken,
  createJoinToken,
  CreateJoinTokenInput,
  drainNode,
  listNodes,
  NodeActionRequest,
  NodeList,
  OperatedNode,
  revokeNode,
  RotateCredentialRequest,
  rotateNodeCredential,
  RotationRequested,
} from "@thaw/core";
import { followThrough } from "../../follow-through.ts";
import { coreInput } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

export const fleetRouter = router({
  nodes: protectedProcedure
    .output(NodeList)
    .query(({ ctx }) => listNodes({ actor: ctx.actor, db: ctx.db })),

  /** A one-time join token; with `nodeId`, one that lets that node's host join again. */
  createJoinToken: protectedProcedure
    .input(coreInput(CreateJoinTokenInput, ""))
    .output(CreatedJoinToken)
    .mutation(({ ctx, input }) => createJoinToken({ actor: ctx.actor, input, db: ctx.db })),

  /** The node's agent fetches a new credential at its next heartbeat. */
  rotateCredential: protectedProcedure
    .input(coreInput(RotateCredentialRequest, ""))
    .output(RotationRequested)
    .mutation(({ ctx, input }) =>
      rotateNodeCredential({ actor: ctx.actor, input: { node: input.nodeId }, db: ctx.db }),
    ),

  /** No credential of the node is accepted any more; it is drained. */
  revoke: protectedProcedure
    .input(coreInput(NodeActionRequest, ""))
    .output(OperatedNode)
    .mutation(async ({ ctx, input }) =>
      followThrough(
        await revokeNode({
          actor: ctx.actor,
          input: { node: input.nodeId, reason: input.reason },
          db: ctx.db,
        }),
      ),
    ),

  /** Nothing new is placed on the node; its replicas are replaced elsewhere. */
  drain: protectedProcedure
    .input(coreInput(NodeActionRequest, ""))
    .output(OperatedNode)
    .mutation(async ({ ctx, input }) =>
      followThrough(
        await drainNode({
          actor: ctx.actor,
          input: { node: input.nodeId, reason: input.reason },
          db: ctx.db,
        }),
      ),
    ),
});
