import { randomBytes } from "node:crypto";
import { API_KEY_SCOPES } from "@thaw/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../web-server.ts";
import { newApiKey, restClient } from "./rest-client.ts";

// Webhooks as a REST client meets them, through the built server: the secret is answered on
// create and rotate only, no read shows it, a private or metadata URL is a 422 naming `url`,
// and an endpoint scaled over REST leaves a delivery in the subscription's log.

interface Webhook {
  id: string;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  secret?: string;
  previousSecretExpiresAt: string | null;
}

describe("webhooks over REST v1", () => {
  let server: WebServer;
  let api: ReturnType<typeof restClient>;

  beforeAll(async () => {
    server = await startWebServer({
      env: { THAW_CREDENTIALS_KEY: randomBytes(32).toString("base64") },
    });
    const key = await newApiKey(server.database.db, server.orgId, API_KEY_SCOPES, {
      name: "webhooks",
    });
    api = restClient(server.baseUrl, key);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("shows the secret once; GET, list and the database never show it", async () => {
    const created = await api("POST", "/api/v1/webhooks", {
      body: {
        url: "https://hooks.example.com/thaw?token=abc",
        description: "on-call",
        eventTypes: ["cold_start.failed", "endpoint.scaled"],
      },
    });
    expect(created.status, created.text).toBe(201);
    const hook = created.json as Webhook;
    expect(hook.secret).toMatch(/^whsec_/);
    const secretBody = hook.secret!.slice("whsec_".length);
    const one = await api("GET", `/api/v1/webhooks/${hook.id}`);
    expect(one.status).toBe(200);
    expect(one.json).toMatchObject({ id: hook.id, eventTypes: hook.eventTypes, enabled: true });
    expect(one.text).not.toContain(secretBody);
    expect(one.json).not.toHaveProperty("secret");
    const list = await api("GET", "/api/v1/webhooks");
    expect(list.text).toContain(hook.id);
    expect(list.text).not.toContain(secretBody);
    const audit = await server.database.db.auditLog.findMany({ where: { targetId: hook.id } });
    expect(JSON.stringify(audit)).not.toContain(secretBody);
    expect(JSON.stringify(audit)).not.toContain("token=abc");

    const rotated = await api("POST", `/api/v1/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const next = rotated.json as Webhook;
    expect(next.secret).toMatch(/^whsec_/);
    expect(next.secret).not.toBe(hook.secret);
    expect(next.previousSecretExpiresAt).not.toBeNull();
    expect((await api("GET", `/api/v1/webhooks/${hook.id}`)).text).not.toContain(
      next.secret!.slice(6),
    );
  });

  it.each([
    ["loopback", "http://127.0.0.1:8080/hook"],
    ["private", "https://10.1.2.3/hook"],
    ["metadata", "https://169.254.169.254/latest/meta-data/"],
    ["plain http", "http://hooks.example.com/hook"],
  ])("refuses a %s URL with a 422 naming url", async (_what, url) => {
    const answer = await api("POST", "/api/v1/webhooks", {
      body: { url, eventTypes: ["cold_start.failed"] },
    });
    expect(answer.status, answer.text).toBe(422);
    expect(answer.json).toMatchObject({ error: { details: { field: "body.url" } } });
  });

  it("refuses a private URL on PATCH too, and an unknown event type with a 400", async () => {
    const created = (
      await api("POST", "/api/v1/webhooks", {
        body: { url: "https://hooks.example.com/b", eventTypes: ["deployment.rolled"] },
      })
    ).json as Webhook;
    const patch = await api("PATCH", `/api/v1/webhooks/${created.id}`, {
      body: { url: "https://192.168.0.10/x" },
    });
    expect(patch.status).toBe(422);
    expect(patch.json).toMatchObject({ error: { details: { field: "body.url" } } });
    const bad = await api("POST", "/api/v1/webhooks", {
      body: { url: "https://hooks.example.com/c", eventTypes: ["cold_start.nope"] },
    });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: { details: { field: "body.eventTypes.0" } } });
    expect((await api("GET", "/api/v1/webhooks/not-a-uuid")).status).toBe(400);
    expect((await api("DELETE", `/api/v1/webhooks/${created.id}`)).status).toBe(200);
    expect((await api("GET", `/api/v1/webhooks/${created.id}`)).status).toBe(404);
  });

  it("logs a delivery when an endpoint is scaled; a pending one is not redelivered", async () => {
    const hook = (
      await api("POST", "/api/v1/webhooks", {
        body: { url: "https://hooks.example.com/scaled", eventTypes: ["endpoint.scaled"] },
      })
    ).json as Webhook;
    const endpoint = await server.database.db.endpoint.findFirstOrThrow({
      where: { orgId: server.orgId, deletedAt: null },
    });
    const target = endpoint.desiredReplicas === 1 ? 2 : 1;
    await server.database.db.endpoint.update({
      where: { id: endpoint.id },
      data: { maxReplicas: Math.max(endpoint.maxReplicas, 2), minReplicas: 0 },
    });
    const scaled = await api("PUT", `/api/v1/endpoints/${endpoint.slug}/replicas`, {
      body: { replicas: target },
    });
    expect(scaled.status, scaled.text).toBe(200);
    const log = await api("GET", `/api/v1/webhooks/${hook.id}/deliveries`);
    expect(log.status).toBe(200);
    const { deliveries } = log.json as {
      deliveries: { id: string; eventType: string; status: string; payload: unknown }[];
    };
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({
      eventType: "endpoint.scaled",
      status: "pending",
      payload: {
        type: "endpoint.scaled",
        data: { endpointId: endpoint.id, desiredReplicas: target },
      },
    });
    const again = await api("POST", `/api/v1/webhook-deliveries/${deliveries[0]!.id}/redeliver`);
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ error: { details: { field: "id" } } });
  });
});
