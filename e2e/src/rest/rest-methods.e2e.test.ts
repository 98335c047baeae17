import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../web-server.ts";
import { newApiKey, restClient } from "./rest-client.ts";

// Methods as the built server answers them: routes without path parameters answer (they were
// 500s in production: Next passes such a route no params), and a method the OpenAPI document
// does not declare is a 405 naming the allowed ones — TRACE included, which Next cannot even
// represent as a Request.

/** A request by node:http, which (unlike fetch) sends any method, TRACE included. */
function raw(url: string, method: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; allow: string | undefined; body: string }>(
    (resolve, reject) => {
      const req = request(url, { method, headers }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.once("end", () =>
          resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body }),
        );
      });
      req.once("error", reject);
      req.end();
    },
  );
}

describe("REST v1 methods through the built server", () => {
  let server: WebServer;
  let call: ReturnType<typeof restClient>;
  let key: string;

  beforeAll(async () => {
    server = await startWebServer();
    key = await newApiKey(server.database.db, server.orgId, ["endpoints:read", "endpoints:write"]);
    call = restClient(server.baseUrl, key);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("answers the routes that have no path parameters", async () => {
    const list = await call("GET", "/api/v1/endpoints");
    expect(list.status, list.text).toBe(200);
    expect((list.json as { endpoints: unknown[] }).endpoints.length).toBeGreaterThan(0);
    const refused = await call("POST", "/api/v1/endpoints", { body: { slug: "x" } });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json).toMatchObject({ error: { code: "BAD_REQUEST" } });
  });

  it("answers an undeclared method with 405 and Allow, on every kind of REST path", async () => {
    for (const [method, path, allow] of [
      ["TRACE", "/api/v1/endpoints", "GET, POST, HEAD"],
      ["TRACE", "/api/v1/stream", "GET, HEAD"],
      ["DELETE", "/api/v1/endpoints/llama-3-2-1b-gguf/replicas", "PUT"],
      ["PUT", "/api/v1/endpoints/llama-3-2-1b-gguf", "GET, DELETE, PATCH, HEAD"],
      ["PATCH", "/api/v1/cold-starts/01a20e2f-7ebf-7365-9420-d29ad35c7c4a", "GET, HEAD"],
    ] as const) {
      const answer = await raw(`${server.baseUrl}${path}`, method, {
        authorization: `Bearer ${key}`,
      });
      expect(answer.status, `${method} ${path}: ${answer.body}`).toBe(405);
      expect(answer.allow, `${method} ${path}`).toBe(allow);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "METHOD_NOT_ALLOWED" } });
    }
  });

  it("still answers declared methods, HEAD where GET is, and TRACE elsewhere with 405", async () => {
    expect((await call("HEAD", "/api/v1/endpoints")).status).toBe(200);
    const page = await fetch(`${server.baseUrl}/sign-in`, { method: "GET" });
    expect(page.status).toBe(200);
    expect((await raw(`${server.baseUrl}/sign-in`, "TRACE")).status).toBe(405);
  });
});
