import { useTestDatabase } from "@thaw/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import { listAuditLog } from "./list-audit-log.ts";
import { recordAudit } from "./record-audit.ts";

describe("listAuditLog", () => {
  const database = useTestDatabase();
  let owner: Actor;
  let viewer: Actor;
  let otherOrg: Actor;

  beforeAll(async () => {
    const db = database.current.db;
    const [a, b] = await Promise.all([
      db.org.create({ data: { slug: "audit-a", name: "A" } }),
      db.org.create({ data: { slug: "audit-b", name: "B" } }),
    ]);
    const user = await db.user.create({
      data: { id: crypto.randomUUID(), email: "owner@a.test", name: "Owner" },
    });
    await db.membership.create({ data: { orgId: a.id, userId: user.id, role: "owner" } });
    const key = await db.apiKey.create({
      data: { orgId: a.id, name: "autoscaler", prefix: "0123456789ab", hash: "h", scopes: [] },
    });
    owner = { type: "user", userId: user.id, orgId: a.id, role: "owner" };
    viewer = { type: "user", userId: user.id, orgId: a.id, role: "viewer" };
    otherOrg = { type: "user", userId: user.id, orgId: b.id, role: "owner" };
    const asKey: Actor = { type: "api_key", apiKeyId: key.id, orgId: a.id, scopes: [] };
    for (let i = 0; i < 5; i++)
      await recordAudit(db, i % 2 ? asKey : owner, {
        action: i === 4 ? "api_key.created" : "endpoint.scaled",
        targetType: "endpoint",
        targetId: `t${i}`,
        metadata: { to: i },
      });
    await recordAudit(db, otherOrg, {
      action: "endpoint.scaled",
      targetType: "endpoint",
      targetId: "b",
    });
  });

  it("pages through the org's entries newest first, naming who did each", async () => {
    const db = database.current.db;
    const first = await listAuditLog({ actor: owner, input: { limit: 3 }, db });
    expect(first.entries.map((e) => e.targetId)).toEqual(["t4", "t3", "t2"]);
    expect(first.entries[0]!.actorName).toBe("owner@a.test");
    expect(first.entries[1]!.actorName).toBe("API key autoscaler (thaw_0123456789ab)");
    expect(first.nextCursor).toBe(first.entries[2]!.id);
    const second = await listAuditLog({
      actor: owner,
      input: { limit: 3, cursor: first.nextCursor },
      db,
    });
    expect(second.entries.map((e) => e.targetId)).toEqual(["t1", "t0"]);
    expect(second.nextCursor).toBeNull();
  });

  it("filters by action prefix and never shows another org's entries", async () => {
    const db = database.current.db;
    const keys = await listAuditLog({ actor: owner, input: { actionPrefix: "api_key." }, db });
    expect(keys.entries.map((e) => e.action)).toEqual(["api_key.created"]);
    const b = await listAuditLog({ actor: otherOrg, input: {}, db });
    expect(b.entries.map((e) => e.targetId)).toEqual(["b"]);
  });

  it("is for admins and owners: a viewer is refused naming the permission", async () => {
    await expect(
      listAuditLog({ actor: viewer, input: {}, db: database.current.db }),
    ).rejects.toMatchObject({ code: "FORBIDDEN", details: { permission: "audit:read" } });
  });

  it("refuses a bad filter or limit naming the field, not a 500", async () => {
    const db = database.current.db;
    await expect(listAuditLog({ actor: owner, input: { limit: 1e9 }, db })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      details: { field: "input.limit" },
    });
    await expect(
      listAuditLog({ actor: owner, input: { actionPrefix: "x%' OR 1=1" }, db }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", details: { field: "input.actionPrefix" } });
  });
});
