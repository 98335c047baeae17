// The authorization matrix of tRPC: every procedure × every kind of caller. Procedures are
// enumerated from the router, so a new one without a row here fails the suite until someone
// decides who may call it. (REST v1's matrix runs through the built server:
// e2e/src/rest/rest-authorization.e2e.test.ts.)
import { randomBytes } from "node:crypto";
import { createApiKey, createEndpoint, inviteMember, type Actor } from "@thaw/core";
import { pushTinyImage, startTestRegistry, type TestRegistry } from "@thaw/core/testing";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "./auth.ts";
import { closeWebTestResources, stubWebEnv, TEST_DEPLOYMENT } from "./testing/web-test-env.ts";
import type { TrpcContext } from "./trpc/init.ts";
import type * as RootModule from "./trpc/root.ts";

type Role = "viewer" | "member" | "admin" | "owner";
const ROLES: Role[] = ["viewer", "member", "admin", "owner"];
const PREFIX = `authz-${Date.now()}`;

interface Fixtures {
  /** A fresh endpoint of org A (for calls that change or delete it). */
  endpoint: () => Promise<{ id: string; slug: string; deploymentId: string }>;
  /** A long-lived endpoint of org A (for reads). */
  stable: { id: string; slug: string; deploymentId: string };
  coldStartId: string;
  apiKeyId: () => Promise<string>;
  /** A fresh node of org A (for rotate, revoke, drain and a join token bound to it). */
  nodeId: () => Promise<string>;
  /** A fresh member (viewer) of org A, and a fresh pending invitation of org A. */
  memberId: () => Promise<string>;
  invitationId: () => Promise<string>;
  /** An image in a real registry (one the operator trusts), for the inspection. */
  imageRef: string;
  /** A fresh registry credential of org A: its registry. */
  registryCredential: () => Promise<string>;
  /** A fresh webhook subscription of org A, and a fresh failed delivery of one. */
  webhookId: () => Promise<string>;
  webhookDeliveryId: () => Promise<string>;
  /** A fresh alert rule of org A. */
  alertRuleId: () => Promise<string>;
}

const deployment = TEST_DEPLOYMENT;
let serial = 0;
const newEndpointInput = () => ({
  slug: `authz-new-${++serial}`,
  name: "New",
  gpuType: "L40S",
  maxReplicas: 2,
  deployment,
});

/**
 * One row per procedure: the least role that may call it (or "signed-in" for the user's
 * own data), and what org B's owner gets when asking with org A's ids.
 */
const PROCEDURES: Record<
  string,
  {
    least: Role | "signed-in";
    crossOrg: "NOT_FOUND" | "OK";
    input?: (f: Fixtures) => unknown;
  }
> = {
  me: { least: "signed-in", crossOrg: "OK" },
  "endpoints.list": { least: "viewer", crossOrg: "OK" },
  "endpoints.create": { least: "member", crossOrg: "OK", input: () => newEndpointInput() },
  "endpoints.update": {
    least: "member",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ endpoint: (await f.endpoint()).slug, changes: { objective: "p90" } }),
  },
  "endpoints.delete": {
    least: "member",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ endpoint: (await f.endpoint()).slug }),
  },
  "deployments.create": {
    least: "member",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ endpoint: (await f.endpoint()).slug, deployment }),
  },
  "deployments.inspect": {
    least: "member",
    crossOrg: "OK",
    input: (f) => ({ imageRef: f.imageRef }),
  },
  "deployments.list": {
    least: "viewer",
    crossOrg: "NOT_FOUND",
    input: (f) => ({ endpoint: f.stable.slug }),
  },
  "fleet.nodes": { least: "viewer", crossOrg: "OK" },
  "fleet.createJoinToken": { least: "admin", crossOrg: "OK", input: () => ({}) },
  "fleet.rotateCredential": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ nodeId: await f.nodeId() }),
  },
  "fleet.revoke": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ nodeId: await f.nodeId() }),
  },
  "fleet.drain": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ nodeId: await f.nodeId() }),
  },
  "apiKeys.list": { least: "admin", crossOrg: "OK" },
  "apiKeys.create": {
    least: "admin",
    crossOrg: "OK",
    input: () => ({ name: "k", scopes: ["endpoints:read"] }),
  },
  "apiKeys.revoke": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ id: await f.apiKeyId() }),
  },
  "registryCredentials.list": { least: "admin", crossOrg: "OK" },
  "registryCredentials.put": {
    least: "admin",
    crossOrg: "OK",
    input: () => ({
      kind: "basic",
      registry: `r${++serial}.example.com`,
      username: "u",
      secret: "p",
    }),
  },
  "registryCredentials.delete": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ registry: await f.registryCredential() }),
  },
  "webhooks.list": { least: "admin", crossOrg: "OK" },
  "webhooks.create": {
    least: "admin",
    crossOrg: "OK",
    input: () => ({ url: "https://hooks.example.com/thaw", eventTypes: ["cold_start.failed"] }),
  },
  "webhooks.update": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ id: await f.webhookId(), change: { enabled: false } }),
  },
  "webhooks.delete": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ id: await f.webhookId() }),
  },
  "webhooks.rotateSecret": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ id: await f.webhookId() }),
  },
  "webhooks.deliveries": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ id: await f.webhookId() }),
  },
  "webhooks.redeliver": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ deliveryId: await f.webhookDeliveryId() }),
  },
  "alerts.rules": { least: "viewer", crossOrg: "OK" },
  "alerts.episodes": { least: "viewer", crossOrg: "OK", input: () => ({}) },
  "alerts.create": {
    least: "admin",
    crossOrg: "OK",
    input: () => ({ kind: "slow_cold_start", name: "slow" }),
  },
  "alerts.update": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ id: await f.alertRuleId(), change: { enabled: false } }),
  },
  "alerts.delete": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ id: await f.alertRuleId() }),
  },
  "audit.list": { least: "admin", crossOrg: "OK", input: () => ({}) },
  "coldStarts.list": { least: "viewer", crossOrg: "OK", input: () => ({}) },
  "coldStarts.get": {
    least: "viewer",
    crossOrg: "NOT_FOUND",
    input: (f) => ({ id: f.coldStartId }),
  },
  "system.health": { least: "viewer", crossOrg: "OK" },
  "org.quotas": { least: "viewer", crossOrg: "OK" },
  "org.settings": { least: "admin", crossOrg: "OK" },
  "org.setSettings": {
    least: "admin",
    crossOrg: "OK",
    input: () => ({ gpuSecondsPerWaitSecond: 2 + (++serial % 5), warmPoolGpuBudget: serial }),
  },
  "analytics.endpointDetail": {
    least: "viewer",
    crossOrg: "NOT_FOUND",
    input: (f) => ({ endpoint: f.stable.slug }),
  },
  "analytics.endpointCost": {
    least: "viewer",
    crossOrg: "NOT_FOUND",
    input: (f) => ({ endpoint: f.stable.slug }),
  },
  "analytics.orgCost": { least: "viewer", crossOrg: "OK", input: () => ({}) },
  // No load recorded for the stable endpoint: answered without the scheduler (no_load).
  "analytics.endpointWhatIf": {
    least: "viewer",
    crossOrg: "NOT_FOUND",
    input: (f) => ({ endpoint: f.stable.slug }),
  },
  "analytics.deploymentBreakdown": {
    least: "viewer",
    crossOrg: "NOT_FOUND",
    input: (f) => ({ deploymentId: f.stable.deploymentId }),
  },
  "members.list": { least: "admin", crossOrg: "OK" },
  "members.invite": {
    least: "admin",
    crossOrg: "OK",
    input: () => ({ email: `invitee-${++serial}@a.test`, role: "viewer" }),
  },
  "members.changeRole": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ userId: await f.memberId(), role: "member" }),
  },
  "members.remove": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ userId: await f.memberId() }),
  },
  "members.revokeInvitation": {
    least: "admin",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ id: await f.invitationId() }),
  },
  "scaling.setReplicas": {
    least: "member",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ endpoint: (await f.endpoint()).slug, replicas: 1 }),
  },
};

describe("authorization matrix", () => {
  let t: TestDatabase;
  let root: typeof RootModule;
  let users: Record<Role | "ownerB", SessionUser>;
  let orgAId: string;
  let fixtures: Fixtures;
  let registry: TestRegistry;

  /** Rows that a refused call must leave untouched. */
  const counts = async () => ({
    endpoints: await t.db.endpoint.count({ where: { deletedAt: null } }),
    versions: await t.db.endpoint.aggregate({ _sum: { version: true } }),
    deployments: await t.db.deployment.count(),
    audit: await t.db.auditLog.count(),
    scaleEvents: await t.db.scaleEvent.count(),
    apiKeys: await t.db.apiKey.count({ where: { revokedAt: null } }),
    joinTokens: await t.db.joinToken.count(),
    nodes: await t.db.node.findMany({
      orderBy: { id: "asc" },
      select: {
        id: true,
        state: true,
        credentialHash: true,
        credentialRevokedAt: true,
        credentialRotationRequestedAt: true,
      },
    }),
    orgSettings: await t.db.org.findMany({
      orderBy: { slug: "asc" },
      select: { slug: true, gpuSecondsPerWaitSecond: true, warmPoolGpuBudget: true },
    }),
    endpointPrices: await t.db.endpoint.findMany({
      orderBy: { id: "asc" },
      select: { id: true, gpuSecondsPerWaitSecond: true },
    }),
  });

  beforeAll(async () => {
    t = await createTestDatabase();
    registry = await startTestRegistry();
    const seeded = await seedDemo(t.db);
    orgAId = seeded.orgId;
    const system: Actor = { type: "system", orgId: orgAId };
    const makeUser = async (email: string, orgId: string, role: Role): Promise<SessionUser> => {
      const user = await t.db.user.create({
        data: { id: crypto.randomUUID(), email, name: email, emailVerified: true },
      });
      await t.db.membership.create({ data: { orgId, userId: user.id, role } });
      return { id: user.id, email, name: email };
    };
    const orgB = await t.db.org.create({ data: { slug: "org-b", name: "Org B" } });
    const demo = await t.db.user.findFirstOrThrow({ where: { id: seeded.userId } });
    users = {
      viewer: await makeUser("viewer@a.test", orgAId, "viewer"),
      member: await makeUser("member@a.test", orgAId, "member"),
      admin: await makeUser("admin@a.test", orgAId, "admin"),
      owner: { id: demo.id, email: demo.email, name: demo.name },
      ownerB: await makeUser("owner@b.test", orgB.id, "owner"),
    };
    await createEndpoint({
      actor: { type: "system", orgId: orgB.id },
      input: { ...newEndpointInput(), slug: "b-only" },
      source: "api",
      db: t.db,
    });
    let fresh = 0;
    const endpoint = async () => {
      const { result: e } = await createEndpoint({
        actor: system,
        input: { ...newEndpointInput(), slug: `authz-target-${++fresh}`, maxReplicas: 4 },
        source: "api",
        db: t.db,
      });
      return { id: e.id, slug: e.slug, deploymentId: e.activeDeployment!.id };
    };
    const stable = await endpoint();
    const replica = await t.db.replica.create({
      data: {
        orgId: orgAId,
        endpointId: stable.id,
        deploymentId: stable.deploymentId,
        state: "failed",
      },
    });
    const coldStart = await t.db.coldStart.create({
      data: {
        orgId: orgAId,
        endpointId: stable.id,
        deploymentId: stable.deploymentId,
        replicaId: replica.id,
        path: "pull",
        locality: "cold",
        predictedSeconds: 42,
        status: "failed",
        error: "test",
      },
    });
    const webhookId = async () =>
      (
        await t.db.webhookSubscription.create({
          data: {
            id: crypto.randomUUID(),
            orgId: orgAId,
            url: "https://hooks.example.com/thaw",
            eventTypes: ["cold_start.failed"],
            sealedSecret: "v1.x.y.z",
          },
        })
      ).id;
    fixtures = {
      endpoint,
      stable,
      coldStartId: coldStart.id,
      nodeId: async () =>
        (
          await t.db.node.create({
            data: {
              orgId: orgAId,
              name: `authz-node-${++serial}`,
              provider: "sim",
              runtime: "sim",
              instanceType: "g5.xlarge",
              gpuModel: "A10G",
              gpuCount: 1,
              vcpus: 4,
              networkGbps: 10,
              diskReadMiBps: 1_000,
              diskWriteMiBps: 1_000,
              pcieGBps: 12,
              state: "ready",
              credentialHash: `authz-${serial}-${"0".repeat(40)}`,
            },
          })
        ).id,
      memberId: async () => {
        const user = await t.db.user.create({
          data: {
            id: crypto.randomUUID(),
            email: `member-${++serial}@a.test`,
            name: "m",
            emailVerified: true,
          },
        });
        await t.db.membership.create({ data: { orgId: orgAId, userId: user.id, role: "viewer" } });
        return user.id;
      },
      invitationId: async () =>
        (
          await inviteMember({
            actor: system,
            input: { email: `pending-${++serial}@a.test`, role: "viewer" },
            db: t.db,
          })
        ).id,
      imageRef: await pushTinyImage(registry, "authz/app", "v1"),
      registryCredential: async () => {
        const host = `r${++serial}.example.com`;
        await t.db.registryCredential.create({
          data: {
            orgId: orgAId,
            registry: host,
            kind: "basic",
            username: "u",
            sealedSecret: "v1.x.y.z",
          },
        });
        return host;
      },
      webhookId,
      alertRuleId: async () =>
        (
          await t.db.alertRule.create({
            data: { orgId: orgAId, kind: "slow_cold_start", name: `authz ${++serial}` },
          })
        ).id,
      webhookDeliveryId: async () =>
        (
          await t.db.webhookDelivery.create({
            data: {
              orgId: orgAId,
              subscriptionId: await webhookId(),
              messageId: `msg_authz_${++serial}`,
              eventType: "cold_start.failed",
              payload: {},
              status: "failed",
            },
          })
        ).id,
      apiKeyId: async () =>
        (
          await createApiKey({
            actor: system,
            input: { name: "t", scopes: ["fleet:read"] },
            db: t.db,
          })
        ).id,
    };
    stubWebEnv({
      databaseUrl: t.url,
      queuePrefix: PREFIX,
      extra: {
        THAW_TRUSTED_REGISTRIES: registry.host,
        THAW_CREDENTIALS_KEY: randomBytes(32).toString("base64"),
      },
    });
    root = await import("./trpc/root.ts");
  });
  afterAll(async () => {
    await closeWebTestResources();
    await registry?.stop();
    await t.drop();
  });

  describe("tRPC", () => {
    const ctx = (user: SessionUser | null, orgSlug?: string): TrpcContext => ({
      db: t.db,
      user,
      orgSlug,
    });
    const invoke = async (context: TrpcContext, path: string, input: unknown) => {
      const caller = root.createCaller(context) as unknown as Record<string, unknown>;
      const fn = path
        .split(".")
        .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], caller);
      try {
        return { code: "OK", value: await (fn as (i: unknown) => Promise<unknown>)(input) };
      } catch (error) {
        return { code: (error as { code?: string }).code ?? String(error), value: undefined };
      }
    };

    it("has a row for every procedure of the app router", () => {
      const procedures = Object.keys(root.appRouter._def.procedures).sort();
      expect(procedures.filter((p) => !(p in PROCEDURES))).toEqual([]);
      expect(Object.keys(PROCEDURES).filter((p) => !procedures.includes(p))).toEqual([]);
    });

    for (const [path, row] of Object.entries(PROCEDURES)) {
      it(`${path}: signed out, each role of org A, org B's owner`, async () => {
        const input = () => Promise.resolve(row.input?.(fixtures));
        const refused = async (context: TrpcContext, expected: string, who: string) => {
          const call = await input();
          const before = await counts();
          expect((await invoke(context, path, call)).code, who).toBe(expected);
          expect(await counts(), `${who} wrote nothing`).toEqual(before);
        };
        await refused(ctx(null), "UNAUTHORIZED", "signed out");
        for (const role of ROLES) {
          const allowed =
            row.least === "signed-in" || ROLES.indexOf(role) >= ROLES.indexOf(row.least);
          if (allowed) {
            const result = await invoke(ctx(users[role]), path, await input());
            expect(result.code, role).toBe("OK");
          } else await refused(ctx(users[role]), "FORBIDDEN", role);
        }
        // Org B's owner with org A's ids, in their own org.
        if (row.crossOrg === "NOT_FOUND") await refused(ctx(users.ownerB), "NOT_FOUND", "owner B");
        else {
          const result = await invoke(ctx(users.ownerB), path, await input());
          expect(result.code, "owner B").toBe("OK");
          expect(JSON.stringify(result.value ?? null)).not.toContain(fixtures.stable.id);
        }
        // …and asking to act in org A, of which they are no member.
        if (path !== "me") await refused(ctx(users.ownerB, "demo"), "NOT_FOUND", "owner B in A");
      });
    }
  });
});
