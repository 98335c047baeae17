import { DEMO_USER } from "@thaw/db/seed";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../web-server.ts";

// tRPC mutations as another site would send them with a signed-in user's cookie (issue 23,
// Low): a multipart form post, or JSON with a foreign Origin. The browser sends the cookie
// with either, so the cookie alone must not be enough: both are refused.

describe("tRPC from another site", () => {
  let server: WebServer;
  let cookie: string;

  beforeAll(async () => {
    server = await startWebServer();
    const signIn = await fetch(`${server.baseUrl}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.baseUrl },
      body: JSON.stringify({ email: DEMO_USER.email, password: DEMO_USER.password }),
    });
    expect(signIn.status).toBe(200);
    cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
  });
  afterAll(async () => {
    await server?.stop();
  });

  const scale = (headers: Record<string, string>, body: BodyInit) =>
    fetch(`${server.baseUrl}/api/trpc/scaling.setReplicas`, {
      method: "POST",
      headers: { cookie, ...headers },
      body,
    });
  const desired = async () =>
    (await server.database.db.endpoint.findFirstOrThrow({ where: { slug: "llama-3-2-1b-gguf" } }))
      .desiredReplicas;

  it("refuses a multipart form post and a foreign Origin, and changes nothing", async () => {
    const before = await desired();
    const form = new FormData();
    form.set("endpoint", "llama-3-2-1b-gguf");
    form.set("replicas", "3");
    expect((await scale({ origin: server.baseUrl }, form)).status).toBe(403);
    const json = JSON.stringify({ json: { endpoint: "llama-3-2-1b-gguf", replicas: 3 } });
    const foreign = await scale(
      { "content-type": "application/json", origin: "https://evil.example" },
      json,
    );
    expect(foreign.status).toBe(403);
    const crossSite = await scale(
      { "content-type": "application/json", "sec-fetch-site": "cross-site" },
      json,
    );
    expect(crossSite.status).toBe(403);
    expect(await desired()).toBe(before);
    // The dashboard's own call still works.
    const own = await scale({ "content-type": "application/json", origin: server.baseUrl }, json);
    expect(own.status, await own.text()).toBe(200);
    expect(await desired()).toBe(3);
  });
});
