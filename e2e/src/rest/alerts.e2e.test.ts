import { randomBytes } from "node:crypto";
import { API_KEY_SCOPES } from "@thaw/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../web-server.ts";
import { newApiKey, restClient } from "./rest-client.ts";

// Alert rules as a REST client meets them, through the built server: an SLO rule and a
// slow-start rule created and listed, bad input named by field (400 for what the document
// refuses, 422 for its rules), a Slack-format webhook for the alerts, and episodes listed.

interface Rule {
  id: string;
  kind: string;
  endpoint: { id: string; slug: string } | null;
  thresholdSeconds: number | null;
  objective: number | null;
  enabled: boolean;
  openEpisodes: number;
}

describe("alerts over REST v1", () => {
  let server: WebServer;
  let api: ReturnType<typeof restClient>;
  let slug: string;

  beforeAll(async () => {
    server = await startWebServer({
      env: { THAW_CREDENTIALS_KEY: randomBytes(32).toString("base64") },
    });
    const key = await newApiKey(server.database.db, server.orgId, API_KEY_SCOPES, {
      name: "alerts",
    });
    api = restClient(server.baseUrl, key);
    slug = (
      await server.database.db.endpoint.findFirstOrThrow({
        where: { orgId: server.orgId, deletedAt: null },
      })
    ).slug;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("creates, lists, changes and deletes rules", async () => {
    const slo = await api("POST", "/api/v1/alert-rules", {
      body: {
        kind: "time_to_ready_slo",
        name: "ready within 2 minutes",
        endpoint: slug,
        thresholdSeconds: 120,
        objective: 0.95,
      },
    });
    expect(slo.status, slo.text).toBe(201);
    const rule = slo.json as Rule;
    expect(rule).toMatchObject({
      kind: "time_to_ready_slo",
      endpoint: { slug },
      thresholdSeconds: 120,
      objective: 0.95,
      enabled: true,
      openEpisodes: 0,
    });
    const slow = await api("POST", "/api/v1/alert-rules", {
      body: { kind: "slow_cold_start", name: "slow starts anywhere" },
    });
    expect(slow.status, slow.text).toBe(201);
    expect((slow.json as Rule).endpoint).toBeNull();
    const list = await api("GET", "/api/v1/alert-rules");
    expect((list.json as { rules: Rule[] }).rules.map((r) => r.id)).toEqual([
      rule.id,
      (slow.json as Rule).id,
    ]);
    const tuned = await api("PATCH", `/api/v1/alert-rules/${rule.id}`, {
      body: { objective: 0.99, enabled: false },
    });
    expect(tuned.status, tuned.text).toBe(200);
    expect(tuned.json).toMatchObject({ objective: 0.99, enabled: false });
    expect((await api("GET", `/api/v1/alert-rules/${rule.id}`)).json).toMatchObject({
      objective: 0.99,
    });
    expect((await api("DELETE", `/api/v1/alert-rules/${rule.id}`)).status).toBe(200);
    expect((await api("GET", `/api/v1/alert-rules/${rule.id}`)).status).toBe(404);
  });

  it("names the field of bad input: 400 for the document's shape, 422 for its rules", async () => {
    const missing = await api("POST", "/api/v1/alert-rules", {
      body: { kind: "time_to_ready_slo", name: "no threshold", objective: 0.9 },
    });
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ error: { details: { field: "body.thresholdSeconds" } } });
    const unknown = await api("POST", "/api/v1/alert-rules", {
      body: { kind: "slow_cold_start", name: "x", endpoint: "no-such-endpoint" },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.json).toMatchObject({ error: { details: { field: "body.endpoint" } } });
    const slowRule = (
      await api("POST", "/api/v1/alert-rules", { body: { kind: "slow_cold_start", name: "s" } })
    ).json as Rule;
    const wrongKind = await api("PATCH", `/api/v1/alert-rules/${slowRule.id}`, {
      body: { thresholdSeconds: 30 },
    });
    expect(wrongKind.status).toBe(422);
    expect(wrongKind.json).toMatchObject({
      error: { details: { field: "body.thresholdSeconds" } },
    });
    const badState = await api("GET", "/api/v1/alert-episodes?state=burning");
    expect(badState.status).toBe(400);
    expect(badState.json).toMatchObject({ error: { details: { field: "query.state" } } });
  });

  it("subscribes a Slack-format webhook to alerts, and lists episodes", async () => {
    const hook = await api("POST", "/api/v1/webhooks", {
      body: {
        url: "https://hooks.slack.example.com/services/T0/B0/x",
        eventTypes: ["alert.firing", "alert.resolved"],
        format: "slack",
      },
    });
    expect(hook.status, hook.text).toBe(201);
    expect(hook.json).toMatchObject({ format: "slack" });
    const episodes = await api("GET", "/api/v1/alert-episodes?state=open");
    expect(episodes.status).toBe(200);
    expect(episodes.json).toEqual({ episodes: [] });
  });
});
