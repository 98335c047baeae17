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
