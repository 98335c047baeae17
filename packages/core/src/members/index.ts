export { acceptInvitation, describeInvitation, MIN_PASSWORD_LENGTH } from "./accept-invitation.ts";
export { changeMemberRole } from "./change-member-role.ts";
export { inviteMember } from "./invite-member.ts";
export { listMembers } from "./list-members.ts";
export {
  ChangedMemberRole,
  ChangeMemberRoleInput,
  CreatedInvitation,
  INVITATION_KIND,
  INVITATION_TTL_DAYS,
  InviteMemberInput,
  MemberList,
  RemovedMember,
  RemoveMemberInput,
  RevokedInvitation,
  RevokeInvitationInput,
} from "./member-schemas.ts";
export { removeMember } from "./remove-member.ts";
export { revokeInvitation } from "./revoke-invitation.ts";
