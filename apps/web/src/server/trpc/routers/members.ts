import {
  ChangedMemberRole,
  changeMemberRole,
  ChangeMemberRoleInput,
  CreatedInvitation,
  inviteMember,
  InviteMemberInput,
  listMembers,
  MemberList,
  RemovedMember,
  removeMember,
  RemoveMemberInput,
  RevokedInvitation,
  revokeInvitation,
  RevokeInvitationInput,
} from "@thaw/core";
import { coreInput } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

/** The org's people: owners invite (a one-time link), change roles and remove members. */
export const membersRouter = router({
  list: protectedProcedure
    .output(MemberList)
    .query(({ ctx }) => listMembers({ actor: ctx.actor, db: ctx.db })),
  invite: protectedProcedure
    .input(coreInput(InviteMemberInput))
    .output(CreatedInvitation)
    .mutation(({ ctx, input }) => inviteMember({ actor: ctx.actor, input, db: ctx.db })),
  changeRole: protectedProcedure
    .input(coreInput(ChangeMemberRoleInput))
    .output(ChangedMemberRole)
    .mutation(({ ctx, input }) => changeMemberRole({ actor: ctx.actor, input, db: ctx.db })),
  remove: protectedProcedure
    .input(coreInput(RemoveMemberInput))
    .output(RemovedMember)
    .mutation(({ ctx, input }) => removeMember({ actor: ctx.actor, input, db: ctx.db })),
  revokeInvitation: protectedProcedure
    .input(coreInput(RevokeInvitationInput))
    .output(RevokedInvitation)
    .mutation(({ ctx, input }) => revokeInvitation({ actor: ctx.actor, input, db: ctx.db })),
});
