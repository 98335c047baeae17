import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import {
  acceptInvitation,
  changeMemberRole,
  describeInvitation,
  inviteMember,
  listMembers,
  removeMember,
  revokeInvitation,
} from "./index.ts";

// Members by invitation: no open sign-up; an owner or admin invites an email
// with a role, the link works once, an existing account must be the one signed in, and the
// org never loses its last owner.

describe("members and invitations", () => {
  let t: TestDatabase;
  let owner: Actor;
  const hash = () => Promise.resolve("hashed-password");

  beforeAll(async () => {
    t = await createTestDatabase();
    const { orgId, userId } = await seedDemo(t.db);
    owner = { type: "user", userId, orgId, role: "owner" };
  });
  afterAll(async () => {
    await t.drop();
  });

  it("invites, and the link creates the account once, with the role", async () => {
    const invited = await inviteMember({
      actor: owner,
      input: { email: "New@Example.com", role: "member" },
      db: t.db,
    });
    expect(invited.token).toMatch(/^thawinvite_/);
    expect(await describeInvitation({ token: invited.token, db: t.db })).toMatchObject({
      email: "new@example.com",
      role: "member",
      accountExists: false,
    });
    // A name that displays as something else is refused, and the link stays unspent.
    await expect(
      acceptInvitation({
        token: invited.token,
        db: t.db,
        signedInUserId: null,
        name: "adm\u202Enim",
        passwordHash: hash,
      }),
    ).rejects.toMatchObject({ code: "UNPROCESSABLE", details: { field: "name" } });
    const joined = await acceptInvitation({
      token: invited.token,
      db: t.db,
      signedInUserId: null,
      name: "New",
      passwordHash: hash,
    });
    expect(joined).toMatchObject({ email: "new@example.com", created: true });
    const { members } = await listMembers({ actor: owner, db: t.db });
    expect(members.find((m) => m.email === "new@example.com")?.role).toBe("member");
    await expect(
      acceptInvitation({
        token: invited.token,
        db: t.db,
        signedInUserId: null,
        passwordHash: hash,
      }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    // The stored invitation holds no secret: `<kind>_<prefix>_<secret>`, and the base64url
    // secret may itself hold underscores, so it is everything after the second one.
    const row = await t.db.invitation.findFirstOrThrow({ where: { email: "new@example.com" } });
    const secret = invited.token.split("_").slice(2).join("_");
    expect(secret.length).toBeGreaterThanOrEqual(40);
    expect(JSON.stringify(row)).not.toContain(secret);
  });

  it("joins an existing account only when it is the one signed in", async () => {
    const someone = await t.db.user.create({
      data: { id: crypto.randomUUID(), email: "existing@example.com", name: "E" },
    });
    const { token } = await inviteMember({
      actor: owner,
      input: { email: "existing@example.com", role: "viewer" },
      db: t.db,
    });
    await expect(
      acceptInvitation({ token, db: t.db, signedInUserId: null, passwordHash: hash }),
    ).rejects.toMatchObject({ code: "CONFLICT", details: { field: "email" } });
    await expect(
      acceptInvitation({
        token,
        db: t.db,
        signedInUserId: owner.type === "user" ? owner.userId : "",
      }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    const joined = await acceptInvitation({ token, db: t.db, signedInUserId: someone.id });
    expect(joined).toMatchObject({ userId: someone.id, created: false });
    // Its password was not touched (it has none here, and still has none).
    expect(await t.db.account.count({ where: { userId: someone.id } })).toBe(0);
  });

  it("changes roles and removes members, never the last owner; only owners manage", async () => {
    const memberId = (await t.db.user.findFirstOrThrow({ where: { email: "new@example.com" } })).id;
    const ownerId = owner.type === "user" ? owner.userId : "";
    await expect(
      changeMemberRole({ actor: owner, input: { userId: ownerId, role: "admin" }, db: t.db }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    await expect(
      removeMember({ actor: owner, input: { userId: ownerId }, db: t.db }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    const admin: Actor = { type: "user", userId: memberId, orgId: owner.orgId, role: "admin" };
    await expect(
      inviteMember({ actor: admin, input: { email: "x@example.com", role: "owner" }, db: t.db }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    await changeMemberRole({ actor: owner, input: { userId: memberId, role: "owner" }, db: t.db });
    // Now there are two owners: the first may step down.
    await changeMemberRole({ actor: owner, input: { userId: ownerId, role: "admin" }, db: t.db });
    await changeMemberRole({ actor: owner, input: { userId: ownerId, role: "owner" }, db: t.db });
    await removeMember({ actor: owner, input: { userId: memberId }, db: t.db });
    expect(await t.db.membership.count({ where: { orgId: owner.orgId, userId: memberId } })).toBe(
      0,
    );
    const actions = (
      await t.db.auditLog.findMany({
        where: { orgId: owner.orgId, action: { startsWith: "member." } },
      })
    ).map((a) => a.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        "member.invited",
        "member.joined",
        "member.role_changed",
        "member.removed",
      ]),
    );
  });

  it("lets admins manage members up to admin; the owner role stays the owners'", async () => {
    const ownerId = owner.type === "user" ? owner.userId : "";
    const admin: Actor = { type: "user", userId: ownerId, orgId: owner.orgId, role: "admin" };
    const invited = await inviteMember({
      actor: admin,
      input: { email: "ops@example.com", role: "member" },
      db: t.db,
    });
    const { userId } = await acceptInvitation({
      token: invited.token,
      db: t.db,
      signedInUserId: null,
      name: "Ops",
      passwordHash: hash,
    });
    await changeMemberRole({ actor: admin, input: { userId, role: "admin" }, db: t.db });
    await expect(
      changeMemberRole({ actor: admin, input: { userId, role: "owner" }, db: t.db }),
    ).rejects.toMatchObject({ code: "FORBIDDEN", details: { field: "role" } });
    // The seeded owner: an admin can neither demote nor remove them.
    await expect(
      changeMemberRole({ actor: admin, input: { userId: ownerId, role: "viewer" }, db: t.db }),
    ).rejects.toMatchObject({ code: "FORBIDDEN", details: { field: "userId" } });
    await expect(
      removeMember({ actor: admin, input: { userId: ownerId }, db: t.db }),
    ).rejects.toMatchObject({ code: "FORBIDDEN", details: { field: "userId" } });
    const ownerInvite = await inviteMember({
      actor: owner,
      input: { email: "co-owner@example.com", role: "owner" },
      db: t.db,
    });
    await expect(
      revokeInvitation({ actor: admin, input: { id: ownerInvite.id }, db: t.db }),
    ).rejects.toMatchObject({ code: "FORBIDDEN", details: { field: "id" } });
    await removeMember({ actor: admin, input: { userId }, db: t.db });
    expect(await t.db.membership.findFirst({ where: { orgId: owner.orgId, userId } })).toBeNull();
    const member: Actor = { type: "user", userId: ownerId, orgId: owner.orgId, role: "member" };
    await expect(
      inviteMember({ actor: member, input: { email: "y@example.com", role: "viewer" }, db: t.db }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("revokes a pending invitation, and its link stops working", async () => {
    const invited = await inviteMember({
      actor: owner,
      input: { email: "later@example.com", role: "viewer" },
      db: t.db,
    });
    await revokeInvitation({ actor: owner, input: { id: invited.id }, db: t.db });
    await expect(describeInvitation({ token: invited.token, db: t.db })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
