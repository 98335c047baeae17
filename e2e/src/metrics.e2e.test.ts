import { parsePrometheusText, sumSamples } from "@thaw/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiKey, restClient } from "./rest/rest-client.ts";
import { startWebServer, type WebServer } from "./web-server.ts";

// The web app's GET /api/metrics through the built server: only the operator's token opens
// it, every API call is counted under a route from a closed set (never a path with an id or
// a name a client made up), and the counts are exactly the calls made.

const TOKEN = "metrics-token-for-the-web-test";
const SLUG = "llama-3-2-1b-gguf";
const STATUS_ROUTE = "/api/v1/endpoints/{endpoint}/status";

describe("GET /api/metrics", () => {
  let server: WebServer;
  let call: ReturnType<typeof restClient>;

  const scrape = async (authorization?: string) =>
    fetch(`${server.baseUrl}/api/metrics`, {
      headers: authorization ? { authorization } : {},
    });

  beforeAll(async () => {
    server = await startWebServer({
      env: { THAW_METRICS_TOKEN: TOKEN, THAW_REST_RATE_LIMIT_PER_MINUTE: "100000" },
    });
    const key = await newApiKey(server.database.db, server.orgId, ["endpoints:read"]);
    call = restClient(server.baseUrl, key);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("answers only the operator's token", async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape("Bearer wrong-token-wrong-token")).status).toBe(401);
    const key = await newApiKey(server.database.db, server.orgId, ["endpoints:read"]);
    // A tenant's API key is not the operator's token.
    expect((await scrape(`Bearer ${key}`)).status).toBe(401);
  });

  it("counts REST, tRPC and agent API calls by route template, method and status", async () => {
    for (let i = 0; i < 3; i++)
      expect((await call("GET", `/api/v1/endpoints/${SLUG}/status`)).status).toBe(200);
    const missing = `no-such-endpoint-${Date.now()}`;
    expect((await call("GET", `/api/v1/endpoints/${missing}/status`)).status).toBe(404);
    expect((await call("GET", `/api/v1/endpoints/${SLUG}/status`, { key: null })).status).toBe(401);
    const madeUp = `madeUp${Date.now()}.procedure`;
    const trpc = await fetch(`${server.baseUrl}/api/trpc/${madeUp}`);
    expect(trpc.status).toBe(404);
    const agent = await fetch(`${server.baseUrl}/api/agent/v1/heartbeat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(agent.status).toBe(401);

    const response = await scrape(`Bearer ${TOKEN}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    const m = parsePrometheusText(text);
    const rest = (status: string) =>
      sumSamples(m, "thaw_http_requests_total", {
        surface: "rest",
        route: STATUS_ROUTE,
        method: "GET",
        status,
      });
    expect(rest("200")).toBe(3);
    expect(rest("404")).toBe(1);
    expect(rest("401")).toBe(1);
    expect(
      sumSamples(m, "thaw_http_request_duration_seconds", { surface: "rest", route: STATUS_ROUTE }),
    ).toBe(5);
    expect(
      sumSamples(m, "thaw_http_requests_total", {
        surface: "trpc",
        route: "unknown",
        status: "404",
      }),
    ).toBe(1);
    expect(
      sumSamples(m, "thaw_http_requests_total", {
        surface: "agent",
        route: "/api/agent/v1/heartbeat",
        method: "POST",
        status: "401",
      }),
    ).toBe(1);
    // Neither an id, a slug nor a made-up name became a label value.
    expect(text).not.toContain(missing);
    expect(text).not.toContain(SLUG);
    expect(text).not.toContain(madeUp);
    expect(m.has("process_resident_memory_bytes")).toBe(true);
  });
});
