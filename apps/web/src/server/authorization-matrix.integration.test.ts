// The authorization matrix: every tRPC procedure × every kind of caller, and every REST v1
// route × every kind of key. Procedures and routes are enumerated from the router and the
// file system, so a new one without a row here fails the suite until someone decides who
// may call it.
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { API_KEY_SCOPES, createApiKey, createEndpoint, type Actor } from "@thaw/core";
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
  "deployments.list": {
    least: "viewer",
    crossOrg: "NOT_FOUND",
    input: (f) => ({ endpoint: f.stable.slug }),
  },
  "fleet.nodes": { least: "viewer", crossOrg: "OK" },
  "fleet.createJoinToken": { least: "admin", crossOrg: "OK", input: () => ({}) },
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
  "audit.list": { least: "admin", crossOrg: "OK", input: () => ({}) },
  "coldStarts.list": { least: "viewer", crossOrg: "OK", input: () => ({}) },
  "coldStarts.get": {
    least: "viewer",
    crossOrg: "NOT_FOUND",
    input: (f) => ({ id: f.coldStartId }),
  },
  "system.health": { least: "viewer", crossOrg: "OK" },
  "analytics.endpointDetail": {
    least: "viewer",
    crossOrg: "NOT_FOUND",
    input: (f) => ({ endpoint: f.stable.slug }),
  },
  "analytics.deploymentBreakdown": {
    least: "viewer",
    crossOrg: "NOT_FOUND",
    input: (f) => ({ deploymentId: f.stable.deploymentId }),
  },
  "scaling.setReplicas": {
    least: "member",
    crossOrg: "NOT_FOUND",
    input: async (f) => ({ endpoint: (await f.endpoint()).slug, replicas: 1 }),
  },
};

/**
 * One row per REST route file and method: the scope it needs (null: public), and path
 * parameters and body for a call that succeeds with a valid key.
 */
const ROUTES: Record<
  string,
  Record<
    string,
    {
      scope: (typeof API_KEY_SCOPES)[number] | null;
      crossOrg: 200 | 404;
      call: (
        f: Fixtures,
      ) =>
        | { params: Record<string, string>; body?: unknown }
        | Promise<{ params: Record<string, string>; body?: unknown }>;
    }
  >
> = {
  "endpoints/route.ts": {
    GET: { scope: "endpoints:read", crossOrg: 200, call: () => ({ params: {} }) },
    POST: {
      scope: "endpoints:write",
      crossOrg: 200,
      call: () => ({ params: {}, body: newEndpointInput() }),
    },
  },
  "endpoints/[endpoint]/route.ts": {
    GET: {
      scope: "endpoints:read",
      crossOrg: 404,
      call: (f) => ({ params: { endpoint: f.stable.slug } }),
    },
    PATCH: {
      scope: "endpoints:write",
      crossOrg: 404,
      call: async (f) => ({ params: { endpoint: (await f.endpoint()).slug }, body: { name: "x" } }),
    },
    DELETE: {
      scope: "endpoints:write",
      crossOrg: 404,
      call: async (f) => ({ params: { endpoint: (await f.endpoint()).slug } }),
    },
  },
  "endpoints/[endpoint]/deployments/route.ts": {
    GET: {
      scope: "endpoints:read",
      crossOrg: 404,
      call: (f) => ({ params: { endpoint: f.stable.slug } }),
    },
    POST: {
      scope: "deployments:write",
      crossOrg: 404,
      call: async (f) => ({ params: { endpoint: (await f.endpoint()).slug }, body: deployment }),
    },
  },
  "endpoints/[endpoint]/cold-starts/route.ts": {
    GET: {
      scope: "endpoints:read",
      crossOrg: 404,
      call: (f) => ({ params: { endpoint: f.stable.slug } }),
    },
  },
  "cold-starts/[id]/route.ts": {
    GET: {
      scope: "endpoints:read",
      crossOrg: 404,
      call: (f) => ({ params: { id: f.coldStartId } }),
    },
  },
  "endpoints/[endpoint]/replicas/route.ts": {
    PUT: {
      scope: "endpoints:scale",
      crossOrg: 404,
      call: async (f) => ({
        params: { endpoint: (await f.endpoint()).slug },
        body: { replicas: 1 },
      }),
    },
  },
  "endpoints/[endpoint]/status/route.ts": {
    GET: {
      scope: "endpoints:read",
      crossOrg: 404,
      call: (f) => ({ params: { endpoint: f.stable.slug } }),
    },
  },
  "endpoints/[endpoint]/signals/route.ts": {
    POST: {
      scope: "endpoints:scale",
      crossOrg: 404,
      call: async (f) => ({
        params: { endpoint: (await f.endpoint()).slug },
        body: { inFlightRequests: 1 },
      }),
    },
  },
  "endpoints/[endpoint]/predictions/route.ts": {
    GET: {
      scope: "endpoints:read",
      crossOrg: 404,
      call: (f) => ({ params: { endpoint: f.stable.slug } }),
    },
  },
  "stream/route.ts": {
    GET: { scope: "endpoints:read", crossOrg: 200, call: () => ({ params: {} }) },
  },
  "openapi.json/route.ts": {
    GET: { scope: null, crossOrg: 200, call: () => ({ params: {} }) },
  },
};

const V1 = join(import.meta.dirname, "../app/api/v1");
function routeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return routeFiles(path);
    return name === "route.ts" ? [relative(V1, path)] : [];
  });
}

describe("authorization matrix", () => {
  let t: TestDatabase;
  let root: typeof RootModule;
  let users: Record<Role | "ownerB", SessionUser>;
  let orgAId: string;
  let fixtures: Fixtures;

  /** Rows that a refused call must leave untouched. */
  const counts = async () => ({
    endpoints: await t.db.endpoint.count({ where: { deletedAt: null } }),
    versions: await t.db.endpoint.aggregate({ _sum: { version: true } }),
    deployments: await t.db.deployment.count(),
    audit: await t.db.auditLog.count(),
    scaleEvents: await t.db.scaleEvent.count(),
    apiKeys: await t.db.apiKey.count({ where: { revokedAt: null } }),
    joinTokens: await t.db.joinToken.count(),
  });

  beforeAll(async () => {
    t = await createTestDatabase();
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
      const e = await createEndpoint({
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
    fixtures = {
      endpoint,
      stable,
      coldStartId: coldStart.id,
      apiKeyId: async () =>
        (
          await createApiKey({
            actor: system,
            input: { name: "t", scopes: ["fleet:read"] },
            db: t.db,
          })
        ).id,
    };
    stubWebEnv({ databaseUrl: t.url, queuePrefix: PREFIX });
    root = await import("./trpc/root.ts");
  });
  afterAll(async () => {
    await closeWebTestResources();
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

  describe("REST v1", () => {
    type Handler = (
      request: Request,
      context: { params: Promise<Record<string, string>> },
    ) => Promise<Response>;
    const keys: Record<string, string> = {};

    beforeAll(async () => {
      const orgB = await t.db.org.findFirstOrThrow({ where: { slug: "org-b" } });
      const make = async (orgId: string, scopes: readonly string[]) =>
        (
          await createApiKey({
            actor: { type: "system", orgId },
            input: { name: "matrix", scopes: [...scopes] },
            db: t.db,
          })
        ).secret;
      keys.all = await make(orgAId, API_KEY_SCOPES);
      keys.otherOrg = await make(orgB.id, API_KEY_SCOPES);
      for (const scope of API_KEY_SCOPES)
        keys[`without ${scope}`] = await make(
          orgAId,
          API_KEY_SCOPES.filter((s) => s !== scope),
        );
    });

    const request = async (
      file: string,
      method: string,
      key: string | null,
      call: { params: Record<string, string>; body?: unknown },
    ) => {
      const handlers = (await import(/* @vite-ignore */ `../app/api/v1/${file}`)) as Record<
        string,
        Handler
      >;
      const response = await handlers[method]!(
        new Request(`http://localhost/api/v1/${file}`, {
          method,
          headers: {
            ...(key ? { authorization: `Bearer ${key}` } : {}),
            "content-type": "application/json",
          },
          ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
        }),
        { params: Promise.resolve(call.params) },
      );
      const text = response.headers.get("content-type")?.includes("event-stream")
        ? (await response.body?.cancel(), "")
        : await response.text();
      return { status: response.status, text };
    };

    it("has a row for every route file and method under app/api/v1", async () => {
      const files = routeFiles(V1).sort();
      expect(files.filter((f) => !(f in ROUTES))).toEqual([]);
      expect(Object.keys(ROUTES).filter((f) => !files.includes(f))).toEqual([]);
      for (const file of files) {
        const methods = Object.keys(
          (await import(/* @vite-ignore */ `../app/api/v1/${file}`)) as Record<string, unknown>,
        ).filter((m) => /^(GET|POST|PUT|PATCH|DELETE)$/.test(m));
        expect(methods.sort(), file).toEqual(Object.keys(ROUTES[file]!).sort());
      }
    });

    for (const [file, methods] of Object.entries(ROUTES))
      for (const [method, row] of Object.entries(methods))
        it(`${method} ${file}: no key, a key lacking the scope, another org's key, a valid key`, async () => {
          const refused = async (key: string | null, status: number, who: string) => {
            const call = await row.call(fixtures);
            const before = await counts();
            const answer = await request(file, method, key, call);
            expect(answer.status, `${who}: ${answer.text}`).toBe(status);
            expect(await counts(), `${who} wrote nothing`).toEqual(before);
          };
          if (row.scope === null) {
            for (const key of [null, keys.otherOrg!, keys.all!])
              expect((await request(file, method, key, await row.call(fixtures))).status).toBe(200);
            return;
          }
          await refused(null, 401, "no key");
          await refused("thaw_000000000000_notarealkeynotarealkeynotreal", 401, "unknown key");
          await refused(keys[`without ${row.scope}`]!, 403, "lacking the scope");
          if (row.crossOrg === 404) await refused(keys.otherOrg!, 404, "other org");
          else {
            const answer = await request(file, method, keys.otherOrg!, await row.call(fixtures));
            expect(answer.status, answer.text).toBeLessThan(300);
            expect(answer.text).not.toContain(fixtures.stable.id);
          }
          const answer = await request(file, method, keys.all!, await row.call(fixtures));
          expect(answer.status, answer.text).toBeGreaterThanOrEqual(200);
          expect(answer.status, answer.text).toBeLessThan(300);
        });
  });
});
