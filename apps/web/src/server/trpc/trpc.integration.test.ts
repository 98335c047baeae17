// Authorization through the tRPC API: the caller as server components use it, and the
// real HTTP chain (better-auth session cookie → fetch handler → context → core).
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { SessionUser } from "../auth.ts";
import type { TrpcContext } from "./init.ts";
import type * as RootModule from "./root.ts";

type Root = typeof RootModule;

const BASE = "http://localhost:3000";

describe("tRPC authorization", () => {
  let t: TestDatabase;
  let root: Root;
  let closeDb: () => Promise<void>;
  let viewerOfA: SessionUser;
  let orgBEndpointSlug: string;

  const ctx = (user: SessionUser | null, orgSlug?: string): TrpcContext => ({
    db: t.db,
    user,
    orgSlug,
  });

  beforeAll(async () => {
    t = await createTestDatabase();
    const { orgId: orgA } = await seedDemo(t.db);

    // Org B with an endpoint of its own; a second user who is only a viewer of org A.
    const orgB = await t.db.org.create({ data: { slug: "org-b", name: "Org B" } });
    orgBEndpointSlug = "b-private-model";
    await t.db.endpoint.create({
      data: { orgId: orgB.id, slug: orgBEndpointSlug, name: "B private", gpuType: "L40S" },
    });
    const viewer = await t.db.user.create({
      data: {
        id: crypto.randomUUID(),
        email: "viewer@a.test",
        name: "Viewer A",
        emailVerified: true,
      },
    });
    await t.db.membership.create({ data: { orgId: orgA, userId: viewer.id, role: "viewer" } });
    viewerOfA = { id: viewer.id, email: viewer.email, name: viewer.name };

    vi.stubEnv("DATABASE_URL", t.url);
    vi.stubEnv("BETTER_AUTH_SECRET", "test-secret-that-is-at-least-32-characters");
    vi.stubEnv(
      "THAW_AGENT_CALL_PUBLIC_KEY",
      "MCowBQYDK2VwAyEAnXcAANsPB7C8cJmzrTEiFiW5aPEgySmtDHtbmwfmUfY=",
    );
    vi.stubEnv("BETTER_AUTH_URL", BASE);
    vi.stubEnv("LOG_LEVEL", "silent");
    root = await import("./root.ts");
    closeDb = (await import("../db.ts")).closeDb;
  });
  afterAll(async () => {
    await closeDb();
    await t.drop();
    vi.unstubAllEnvs();
  });

  it("a viewer of org A sees org A's endpoints and none of org B's", async () => {
    const endpoints = await root.createCaller(ctx(viewerOfA)).endpoints.list();
    expect(endpoints.map((e) => e.slug)).toHaveLength(4);
    expect(endpoints.map((e) => e.slug)).not.toContain(orgBEndpointSlug);
  });

  it("a viewer of org A asking for org B gets NOT_FOUND, as if it did not exist", async () => {
    await expect(root.createCaller(ctx(viewerOfA, "org-b")).endpoints.list()).rejects.toMatchObject(
      { code: "NOT_FOUND" },
    );
  });

  it("a viewer may read the fleet but not create join tokens (FORBIDDEN from core)", async () => {
    const caller = root.createCaller(ctx(viewerOfA));
    expect(await caller.fleet.nodes()).toEqual([]);
    const error = await caller.fleet.createJoinToken({ ttlSeconds: 600 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCError);
    expect(error).toMatchObject({ code: "FORBIDDEN" });
    expect(await t.db.joinToken.count()).toBe(0);
  });

  it("zod input errors are BAD_REQUEST", async () => {
    await expect(
      root.createCaller(ctx(viewerOfA)).fleet.createJoinToken({ ttlSeconds: -5 }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  it("me lists the user's orgs and role", async () => {
    const me = await root.createCaller(ctx(viewerOfA)).me();
    expect(me.org).toMatchObject({ slug: "demo", role: "viewer" });
    expect(me.can.createJoinToken).toBe(false);
  });

  it("API keys: an owner creates (secret once), lists (no secret) and revokes; a viewer may not", async () => {
    const demo = await t.db.user.findFirstOrThrow({ where: { email: "demo@thaw.dev" } });
    const owner = root.createCaller(ctx({ id: demo.id, email: demo.email, name: demo.name }));
    const created = await owner.apiKeys.create({ name: "autoscaler", scopes: ["endpoints:scale"] });
    expect(created.secret).toMatch(/^thaw_[0-9a-f]{12}_/);
    const listed = await owner.apiKeys.list();
    expect(listed).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    await owner.apiKeys.revoke({ id: created.id });
    expect((await owner.apiKeys.list())[0]!.revokedAt).not.toBeNull();
    await expect(owner.apiKeys.create({ name: "x", scopes: [] })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    const viewer = root.createCaller(ctx(viewerOfA));
    for (const call of [
      () => viewer.apiKeys.list(),
      () => viewer.apiKeys.create({ name: "v", scopes: ["endpoints:read"] }),
      () => viewer.apiKeys.revoke({ id: created.id }),
    ])
      await expect(call()).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await t.db.apiKey.count()).toBe(1);
  });

  it("cold starts: listed per org, another org's (or an unknown) id is NOT_FOUND, limit bounded", async () => {
    const viewer = root.createCaller(ctx(viewerOfA));
    expect(await viewer.coldStarts.list({})).toEqual([]);
    await expect(viewer.coldStarts.get({ id: crypto.randomUUID() })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(viewer.coldStarts.list({ limit: 1e9 })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });

  it("tells any member whether schedulers live, and nothing about their hosts or queues", async () => {
    await t.db.serviceHeartbeat.create({
      data: {
        id: "scheduler:host-a:4242",
        service: "scheduler",
        startedAt: new Date(),
        lastSeenAt: new Date(),
        details: { pid: 4242, hostname: "host-a", queues: { place: { waiting: 17 } } },
      },
    });
    const health = await root.createCaller(ctx(viewerOfA)).system.health();
    expect(health.scheduler.healthy).toBe(true);
    const text = JSON.stringify(health);
    for (const secret of ["4242", "host-a", "waiting"]) expect(text).not.toContain(secret);
  });

  it("a signed-out caller gets UNAUTHORIZED from every procedure", async () => {
    const caller = root.createCaller(ctx(null));
    for (const call of [
      () => caller.endpoints.list(),
      () => caller.fleet.nodes(),
      () => caller.system.health(),
      () => caller.me(),
      () => caller.fleet.createJoinToken({ ttlSeconds: 600 }),
      () => caller.apiKeys.list(),
      () => caller.apiKeys.create({ name: "k", scopes: ["endpoints:read"] }),
      () => caller.coldStarts.list({}),
      () => caller.coldStarts.get({ id: crypto.randomUUID() }),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    }
  });
});
