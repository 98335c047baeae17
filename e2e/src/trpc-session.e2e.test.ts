import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "./web-server.ts";

// The dashboard's tRPC API as a browser meets it: through the built server (next start), with
// the session cookie better-auth sets at sign-in.

describe("tRPC", () => {
  let server: WebServer;
  beforeAll(async () => {
    server = await startWebServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  describe("over HTTP with a better-auth session", () => {
    const getTrpc = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${server.baseUrl}/api/trpc/${path}`, { headers });

    it("without a session cookie: 401", async () => {
      const response = await getTrpc("endpoints.list");
      expect(response.status).toBe(401);
    });

    it("signs in with email + password and reads the org's endpoints with the session cookie", async () => {
      const signIn = await fetch(`${server.baseUrl}/api/auth/sign-in/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: server.baseUrl },
        body: JSON.stringify({ email: "demo@thaw.dev", password: "thaw-demo-password" }),
      });
      expect(signIn.status).toBe(200);
      const cookie = signIn.headers
        .getSetCookie()
        .map((c) => c.split(";")[0])
        .join("; ");
      expect(cookie).toContain("session_token");

      const response = await getTrpc("endpoints.list", { cookie });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { result: { data: { json: { slug: string }[] } } };
      expect(body.result.data.json).toHaveLength(4);

      const forged = await getTrpc("endpoints.list", {
        cookie: cookie.replace(/session_token=[^;.]{4}/, "session_token=xxxx"),
      });
      expect(forged.status).toBe(401);
    });

    it("a wrong password is refused", async () => {
      const response = await fetch(`${server.baseUrl}/api/auth/sign-in/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: server.baseUrl },
        body: JSON.stringify({ email: "demo@thaw.dev", password: "not-the-password" }),
      });
      expect(response.status).toBe(401);
    });
  });
});
