import { z } from "zod";
import { OrgRole } from "../vocabulary/index.ts";

/** Invitation links carry `thawinvite_<prefix>_<secret>`: recognisable, hashed at rest. */
export const INVITATION_KIND = "thawinvite";
/** How long an invitation link works. */
export const INVITATION_TTL_DAYS = 7;

export const InviteMemberInput = z.object({ email: z.email().max(254), role: OrgRole }).strict();

export const ChangeMemberRoleInput = z
  .object({ userId: z.string().min(1).max(64), role: OrgRole })
  .strict();
export const RemoveMemberInput = z.object({ userId: z.string().min(1).max(64) }).strict();
export const RevokeInvitationInput = z.object({ id: z.uuid() }).strict();

// What the members use cases answer (the dashboard's members page).

export const MemberList = z.object({
  members: z.array(
    z.object({
      id: z.string(),
      userId: z.string(),
      name: z.string(),
      email: z.string(),
      role: OrgRole,
      since: z.date(),
    }),
  ),
  /** Pending invitations (not accepted, revoked or expired): prefix only, never the link. */
  invitations: z.array(
    z.object({
      id: z.string(),
      email: z.string(),
      role: OrgRole,
      prefix: z.string(),
      expiresAt: z.date(),
      createdAt: z.date(),
    }),
  ),
});
export type MemberList = z.infer<typeof MemberList>;

/** A new invitation: `token` is the one-time link's secret, shown to the inviter this once. */
export const CreatedInvitation = z.object({
  id: z.string(),
  email: z.string(),
  role: OrgRole,
  expiresAt: z.date(),
  token: z.string(),
});
export type CreatedInvitation = z.infer<typeof CreatedInvitation>;

export const ChangedMemberRole = z.object({ userId: z.string(), role: OrgRole });
export type ChangedMemberRole = z.infer<typeof ChangedMemberRole>;

export const RemovedMember = z.object({ userId: z.string() });
export type RemovedMember = z.infer<typeof RemovedMember>;

export const RevokedInvitation = z.object({ id: z.string() });
export type RevokedInvitation = z.infer<typeof RevokedInvitation>;
