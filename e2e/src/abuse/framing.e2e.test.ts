import { createServer, type Server } from "node:http";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../browser.ts";
import { freePort } from "../process.ts";
import { startWebServer, type WebServer } from "../web-server.ts";

// Clickjacking (issue 23, finding 10): a page of another origin framed the signed-in
// dashboard, its buttons live. In Chromium, against the built server.

describe("the dashboard in another site's frame", () => {
  let server: WebServer;
  let browser: Browser;
  let attacker: Server;
  let attackerUrl: string;

  beforeAll(async () => {
    server = await startWebServer();
    browser = await launchChromium();
    const port = await freePort();
    attacker = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<!doctype html><title>win a GPU</title>
        <iframe id="victim" src="${server.baseUrl}/sign-in" width="800" height="600"></iframe>`);
    });
    await new Promise<void>((r) => attacker.listen(port, "127.0.0.1", r));
    attackerUrl = `http://127.0.0.1:${port}/`;
  });
  afterAll(async () => {
    attacker?.close();
    await browser?.close();
    await server?.stop();
  });

  it("is not rendered: frame-ancestors 'none' and X-Frame-Options DENY", async () => {
    const page = await browser.newPage();
    const framed = page.waitForResponse((r) => r.url().startsWith(`${server.baseUrl}/sign-in`));
    await page.goto(attackerUrl);
    const response = await framed;
    expect(response.headers()["x-frame-options"]).toBe("DENY");
    expect(response.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
    // Give the frame the time a render would take, then look inside it.
    await page.waitForTimeout(1_000);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    const buttons = frame
      ? await frame
          .getByRole("button", { name: "Sign in" })
          .count()
          .catch(() => 0)
      : 0;
    expect(buttons, `frame at ${frame?.url() ?? "(none)"}`).toBe(0);
    // The same page opened directly renders (the test can tell a blocked frame from a broken page).
    const direct = await browser.newPage();
    await direct.goto(`${server.baseUrl}/sign-in`);
    expect(await direct.getByRole("button", { name: "Sign in" }).count()).toBe(1);
    await page.close();
    await direct.close();
  });

  it("sends the security headers on pages and API answers alike", async () => {
    for (const path of ["/sign-in", "/api/v1/endpoints", "/api/health"]) {
      const response = await fetch(`${server.baseUrl}${path}`);
      expect(response.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(response.headers.get("referrer-policy"), path).toBe("strict-origin-when-cross-origin");
      expect(response.headers.get("permissions-policy"), path).toContain("camera=()");
      expect(response.headers.get("content-security-policy"), path).not.toContain("unsafe-eval");
      // Served over plain http here: no HSTS (it would pin a scheme the server does not have).
      expect(response.headers.get("strict-transport-security"), path).toBeNull();
    }
  });
});
