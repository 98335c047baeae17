// The authorization matrix of REST v1 through the built server: every route × every kind of
// key — none, unknown, lacking the scope, another org's, valid — and what a refused call
// leaves written (nothing). Routes are enumerated from the file system and from the served
// OpenAPI document, so a new one without a row here fails until someone decides who may
// call it. (tRPC's matrix is in apps/web/src/server/authorization-matrix.integration.test.ts.)
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { API_KEY_SCOPES, createApiKey, createEndpoint, type Actor } from "@thaw/core";
import {
  pushTinyImage,
  startTestRegistry,
  TEST_DEPLOYMENT,
  type TestRegistry,
} from "@thaw/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../web-server.ts";
import { newApiKey, restClient } from "./rest-client.ts";

interface Fixtures {
  /** A fresh endpoint of org A (for calls that change or delete it). */
  endpoint: () => Promise<{ id: string; slug: string; deploymentId: string }>;
  /** A long-lived endpoint of org A (for reads). */
  stable: { id: string; slug: string; deploymentId: string };
  coldStartId: string;
  /** An image in a registry the server trusts, for the inspection. */
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
  "endpoints/[endpoint]/cost/route.ts": {
    GET: {
      scope: "endpoints:read",
      crossOrg: 404,
      call: (f) => ({ params: { endpoint: f.stable.slug } }),
    },
  },
  // No load recorded for the stable endpoint: answered without the scheduler (no_load).
  "endpoints/[endpoint]/what-if/route.ts": {
    GET: {
      scope: "endpoints:read",
      crossOrg: 404,
      call: (f) => ({ params: { endpoint: f.stable.slug } }),
    },
  },
  "cost/route.ts": {
    GET: { scope: "endpoints:read", crossOrg: 200, call: () => ({ params: {} }) },
  },
  "endpoints/[endpoint]/predictions/route.ts": {
    GET: {
      scope: "endpoints:read",
      crossOrg: 404,
      call: (f) => ({ params: { endpoint: f.stable.slug } }),
    },
  },
  "inspections/route.ts": {
    POST: {
      scope: "deployments:write",
      crossOrg: 200,
      call: (f) => ({ params: {}, body: { imageRef: f.imageRef } }),
    },
  },
  "registry-credentials/route.ts": {
    GET: { scope: "registries:manage", crossOrg: 200, call: () => ({ params: {} }) },
    PUT: {
      scope: "registries:manage",
      crossOrg: 200,
      call: () => ({
        params: {},
        body: { kind: "basic", registry: `r${++serial}.example.com`, username: "u", secret: "p" },
      }),
    },
  },
  "registry-credentials/[registry]/route.ts": {
    DELETE: {
      scope: "registries:manage",
      crossOrg: 404,
      call: async (f) => ({ params: { registry: await f.registryCredential() } }),
    },
  },
  "webhooks/route.ts": {
    GET: { scope: "webhooks:manage", crossOrg: 200, call: () => ({ params: {} }) },
    POST: {
      scope: "webhooks:manage",
      crossOrg: 200,
      call: () => ({
        params: {},
        body: { url: "https://hooks.example.com/thaw", eventTypes: ["endpoint.scaled"] },
      }),
    },
  },
  "webhooks/[id]/route.ts": {
    GET: {
      scope: "webhooks:manage",
      crossOrg: 404,
      call: async (f) => ({ params: { id: await f.webhookId() } }),
    },
    PATCH: {
      scope: "webhooks:manage",
      crossOrg: 404,
      call: async (f) => ({ params: { id: await f.webhookId() }, body: { enabled: false } }),
    },
    DELETE: {
      scope: "webhooks:manage",
      crossOrg: 404,
      call: async (f) => ({ params: { id: await f.webhookId() } }),
    },
  },
  "webhooks/[id]/rotate-secret/route.ts": {
    POST: {
      scope: "webhooks:manage",
      crossOrg: 404,
      call: async (f) => ({ params: { id: await f.webhookId() } }),
    },
  },
  "webhooks/[id]/deliveries/route.ts": {
    GET: {
      scope: "webhooks:manage",
      crossOrg: 404,
      call: async (f) => ({ params: { id: await f.webhookId() } }),
    },
  },
  "webhook-deliveries/[id]/redeliver/route.ts": {
    POST: {
      scope: "webhooks:manage",
      crossOrg: 404,
      call: async (f) => ({ params: { id: await f.webhookDeliveryId() } }),
    },
  },
  "alert-rules/route.ts": {
    GET: { scope: "endpoints:read", crossOrg: 200, call: () => ({ params: {} }) },
    POST: {
      scope: "alerts:manage",
      crossOrg: 200,
      call: () => ({ params: {}, body: { kind: "slow_cold_start", name: "slow" } }),
    },
  },
  "alert-rules/[id]/route.ts": {
    GET: {
      scope: "endpoints:read",
      crossOrg: 404,
      call: async (f) => ({ params: { id: await f.alertRuleId() } }),
    },
    PATCH: {
      scope: "alerts:manage",
      crossOrg: 404,
      call: async (f) => ({ params: { id: await f.alertRuleId() }, body: { enabled: false } }),
    },
    DELETE: {
      scope: "alerts:manage",
      crossOrg: 404,
      call: async (f) => ({ params: { id: await f.alertRuleId() } }),
    },
  },
  "alert-episodes/route.ts": {
    GET: { scope: "endpoints:read", crossOrg: 200, call: () => ({ params: {} }) },
  },
  "stream/route.ts": {
    GET: { scope: "endpoints:read", crossOrg: 200, call: () => ({ params: {} }) },
  },
  "openapi.json/route.ts": {
    GET: { scope: null, crossOrg: 200, call: () => ({ params: {} }) },
  },
};

const V1 = join(import.meta.dirname, "../../../apps/web/src/app/api/v1");
function routeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return routeFiles(path);
    return name === "route.ts" ? [relative(V1, path)] : [];
  });
}

/** The methods a route file exports, read from its text (the module is not loaded). */
function exportedMethods(file: string): string[] {
  const text = readFileSync(join(V1, file), "utf8");
  return [
    ...text.matchAll(/export\s+(?:const|(?:async\s+)?function)\s+(GET|POST|PUT|PATCH|DELETE)\b/g),
  ].map((m) => m[1]!);
}

/** `endpoints/[endpoint]/route.ts` → `/api/v1/endpoints/{endpoint}`. */
const documentPath = (file: string) =>
  `/api/v1/${file.replace(/\/?route\.ts$/, "").replace(/\[(\w+)\]/g, "{$1}")}`.replace(/\/$/, "");

describe("REST v1 authorization matrix, through the built server", () => {
  let server: WebServer;
  let orgAId: string;
  let fixtures: Fixtures;
  let registry: TestRegistry;
  const keys: Record<string, string> = {};
  const db = () => server.database.db;

  /** Rows that a refused call must leave untouched. */
  const counts = async () => ({
    endpoints: await db().endpoint.count({ where: { deletedAt: null } }),
    versions: await db().endpoint.aggregate({ _sum: { version: true } }),
    deployments: await db().deployment.count(),
    audit: await db().auditLog.count(),
    scaleEvents: await db().scaleEvent.count(),
    apiKeys: await db().apiKey.count({ where: { revokedAt: null } }),
    joinTokens: await db().joinToken.count(),
    registryCredentials: await db().registryCredential.count(),
    webhooks: await db().webhookSubscription.aggregate({ _max: { updatedAt: true }, _count: true }),
    webhookDeliveries: await db().webhookDelivery.count({ where: { status: "pending" } }),
    alertRules: await db().alertRule.aggregate({ _max: { updatedAt: true }, _count: true }),
  });

  beforeAll(async () => {
    registry = await startTestRegistry();
    server = await startWebServer({
      env: {
        THAW_REST_RATE_LIMIT_PER_MINUTE: "100000",
        THAW_TRUSTED_REGISTRIES: registry.host,
        THAW_CREDENTIALS_KEY: randomBytes(32).toString("base64"),
      },
    });
    orgAId = server.orgId;
    const system: Actor = { type: "system", orgId: orgAId };
    const orgB = await db().org.create({ data: { slug: "org-b", name: "Org B" } });
    await createEndpoint({
      actor: { type: "system", orgId: orgB.id },
      input: { ...newEndpointInput(), slug: "b-only" },
      source: "api",
      db: db(),
    });
    let fresh = 0;
    const endpoint = async () => {
      const { result: e } = await createEndpoint({
        actor: system,
        input: { ...newEndpointInput(), slug: `authz-target-${++fresh}`, maxReplicas: 4 },
        source: "api",
        db: db(),
      });
      return { id: e.id, slug: e.slug, deploymentId: e.activeDeployment!.id };
    };
    const stable = await endpoint();
    const replica = await db().replica.create({
      data: {
        orgId: orgAId,
        endpointId: stable.id,
        deploymentId: stable.deploymentId,
        state: "failed",
      },
    });
    const coldStart = await db().coldStart.create({
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
        await db().webhookSubscription.create({
          data: {
            id: crypto.randomUUID(),
            orgId: orgAId,
            url: "https://hooks.example.com/thaw",
            eventTypes: ["cold_start.failed"],
            sealedSecret: "v1.x",
          },
        })
      ).id;
    fixtures = {
      endpoint,
      stable,
      coldStartId: coldStart.id,
      imageRef: await pushTinyImage(registry, "authz/app", "v1"),
      registryCredential: async () => {
        const host = `r${++serial}.example.com`;
        await db().registryCredential.create({
          data: {
            orgId: orgAId,
            registry: host,
            kind: "basic",
            username: "u",
            sealedSecret: "v1.x",
          },
        });
        return host;
      },
      webhookId,
      alertRuleId: async () =>
        (
          await db().alertRule.create({
            data: { orgId: orgAId, kind: "slow_cold_start", name: `authz ${++serial}` },
          })
        ).id,
      webhookDeliveryId: async () =>
        (
          await db().webhookDelivery.create({
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
    };
    keys.all = await newApiKey(db(), orgAId, API_KEY_SCOPES, { name: "matrix" });
    keys.otherOrg = await newApiKey(db(), orgB.id, API_KEY_SCOPES, { name: "matrix" });
    for (const scope of API_KEY_SCOPES)
      keys[`without ${scope}`] = (
        await createApiKey({
          actor: system,
          input: { name: "matrix", scopes: API_KEY_SCOPES.filter((s) => s !== scope) },
          db: db(),
        })
      ).secret;
  });
  afterAll(async () => {
    await server?.stop();
    await registry?.stop();
  });

  const request = async (
    file: string,
    method: string,
    key: string | null,
    call: { params: Record<string, string>; body?: unknown },
  ) => {
    const path = documentPath(file).replace(/\{(\w+)\}/g, (_, name: string) =>
      encodeURIComponent(call.params[name] ?? ""),
    );
    const answer = await restClient(server.baseUrl)(method, path, {
      key,
      ...(call.body !== undefined ? { body: call.body } : {}),
    });
    return { status: answer.status, text: answer.text };
  };

  it("has a row for every route file and method under app/api/v1, and the document agrees", async () => {
    const files = routeFiles(V1).sort();
    expect(files.filter((f) => !(f in ROUTES))).toEqual([]);
    expect(Object.keys(ROUTES).filter((f) => !files.includes(f))).toEqual([]);
    for (const file of files)
      expect(exportedMethods(file).sort(), file).toEqual(Object.keys(ROUTES[file]!).sort());
    const document = (await (await fetch(`${server.baseUrl}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = Object.entries(document.paths)
      .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    const routed = Object.entries(ROUTES)
      // The document itself is served, not described.
      .filter(([file]) => file !== "openapi.json/route.ts")
      .flatMap(([file, methods]) => Object.keys(methods).map((m) => `${m} ${documentPath(file)}`))
      .sort();
    expect(routed).toEqual(documented);
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
