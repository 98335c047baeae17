import {
  changeMemberRole,
  ChangeMemberRoleInput,
  inviteMember,
  InviteMemberInput,
  listMembers,
  removeMember,
  RemoveMemberInput,
  revokeInvitation,
  RevokeInvitationInput,
} from "@thaw/core";
import { protectedProcedure, router } from "../init.ts";

/** The org's people: owners invite (a one-time link), change roles and remove members. */
export const membersRouter = router({
  list: protectedProcedure.query(({ ctx }) => listMembers({ actor: ctx.actor, db: ctx.db })),
  invite: protectedProcedure
    .input(InviteMemberInput)
    .mutation(({ ctx, input }) => inviteMember({ actor: ctx.actor, input, db: ctx.db })),
  changeRole: protectedProcedure
    .input(ChangeMemberRoleInput)
    .mutation(({ ctx, input }) => changeMemberRole({ actor: ctx.actor, input, db: ctx.db })),
  remove: protectedProcedure
    .input(RemoveMemberInput)
    .mutation(({ ctx, input }) => removeMember({ actor: ctx.actor, input, db: ctx.db })),
  revokeInvitation: protectedProcedure
    .input(RevokeInvitationInput)
    .mutation(({ ctx, input }) => revokeInvitation({ actor: ctx.actor, input, db: ctx.db })),
});
