import { TEST_DEPLOYMENT } from "@thaw/core/testing";
import { DEMO_ENDPOINTS, DEMO_USER } from "@thaw/db/seed";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../browser.ts";
import { newApiKey, restClient } from "../rest/rest-client.ts";
import { startWebServer, type WebServer } from "../web-server.ts";

// Quotas (issue 23, finding 8): one scale key asked for 30 replicas and the fleet grew from
// 4 to 33 hosts; keys, endpoints and replicas had no ceiling. Against the built server with
// small quotas: past one, a 422 naming the quota and who raises it, and nothing written.

const seededGpus = DEMO_ENDPOINTS.reduce((n, e) => n + e.maxReplicas * e.gpuCount, 0);

describe("org quotas", () => {
  let server: WebServer;
  let call: ReturnType<typeof restClient>;

  beforeAll(async () => {
    server = await startWebServer({
      env: {
        THAW_ORG_MAX_API_KEYS: "2",
        THAW_ORG_MAX_REPLICAS_PER_ENDPOINT: "8",
        THAW_ORG_MAX_GPUS: String(seededGpus + 10),
      },
    });
    call = restClient(
      server.baseUrl,
      await newApiKey(server.database.db, server.orgId, ["endpoints:read", "endpoints:write"]),
    );
  });
  afterAll(async () => {
    await server?.stop();
  });

  const endpoint = (slug: string, extra: object) => ({
    slug,
    name: slug,
    gpuType: "L40S",
    deployment: TEST_DEPLOYMENT,
    ...extra,
  });
  const refusal = (json: unknown) =>
    (json as { error: { code: string; message: string; details: Record<string, unknown> } }).error;

  it("refuses an endpoint past the replicas-per-endpoint and GPU quotas, naming them", async () => {
    const before = await server.database.db.endpoint.count();
    const tooTall = await call("POST", "/api/v1/endpoints", {
      body: endpoint("too-tall", { maxReplicas: 30 }),
    });
    expect(tooTall.status, tooTall.text).toBe(422);
    expect(refusal(tooTall.json)).toMatchObject({
      code: "UNPROCESSABLE",
      details: { quota: "replicasPerEndpoint", limit: 8, field: "body.maxReplicas" },
    });
    expect(refusal(tooTall.json).message).toContain("THAW_ORG_MAX_REPLICAS_PER_ENDPOINT");
    // 8 replicas × 2 GPUs = 16 more GPUs, 10 are left.
    const tooWide = await call("POST", "/api/v1/endpoints", {
      body: endpoint("too-wide", { maxReplicas: 8, gpuCount: 2 }),
    });
    expect(tooWide.status, tooWide.text).toBe(422);
    expect(refusal(tooWide.json).details).toMatchObject({ quota: "gpus" });
    expect(await server.database.db.endpoint.count()).toBe(before);
    // Within both: created; raising it past the GPU quota afterwards is refused too.
    const fits = await call("POST", "/api/v1/endpoints", {
      body: endpoint("fits", { maxReplicas: 8 }),
    });
    expect(fits.status, fits.text).toBe(201);
    const raise = await call("PATCH", "/api/v1/endpoints/fits", {
      body: { maxReplicas: 8, name: "fits" },
    });
    expect(raise.status).toBe(200);
    const over = await call("PATCH", "/api/v1/endpoints/llama-3-2-1b-gguf", {
      body: { maxReplicas: 8 },
    });
    expect(over.status, over.text).toBe(422);
    expect(refusal(over.json).details).toMatchObject({ quota: "gpus" });
  });

  it("refuses an API key past the org's key quota, through the dashboard's API", async () => {
    const signIn = await fetch(`${server.baseUrl}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.baseUrl },
      body: JSON.stringify({ email: DEMO_USER.email, password: DEMO_USER.password }),
    });
    const cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const create = (name: string) =>
      fetch(`${server.baseUrl}/api/trpc/apiKeys.create`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: server.baseUrl, cookie },
        body: JSON.stringify({ json: { name, scopes: ["endpoints:read"] } }),
      });
    // The test's own key is the first of two.
    expect((await create("second")).status).toBe(200);
    const third = await create("third");
    expect(third.status).toBe(422);
    expect(await third.text()).toContain("THAW_ORG_MAX_API_KEYS");
    expect(await server.database.db.apiKey.count()).toBe(2);
  });

  it("shows the quotas beside what the org holds on the dashboard, and the refusal in the form", async () => {
    // The operator gives this org a key quota of its own (what `thaw admin org quota` writes).
    await server.database.db.org.update({ where: { id: server.orgId }, data: { maxApiKeys: 3 } });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(`${server.baseUrl}/sign-in`);
      await page.getByLabel("Email").fill(DEMO_USER.email);
      await page.getByLabel("Password").fill(DEMO_USER.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      const keys = page.getByTestId("quotas").locator("tr[data-quota=apiKeys]");
      await keys.waitFor();
      expect(await keys.locator("td").allInnerTexts()).toEqual([
        "2",
        "3",
        "the operator, for this org (raise: thaw admin org quota --org demo --api-keys <n>)",
      ]);
      const gpus = page.getByTestId("quotas").locator("tr[data-quota=gpus]");
      expect(await gpus.locator("td").nth(1).innerText()).toBe(String(seededGpus + 10));
      expect(await gpus.locator("td").nth(2).innerText()).toContain("the operator's default");

      const form = page.locator("form.api-key-form");
      await form.locator("input[name=api-key-name]").fill("third");
      await form.getByRole("button", { name: "Create API key" }).click();
      await page.getByTestId("api-key").waitFor();
      await form.locator("input[name=api-key-name]").fill("fourth");
      await form.getByRole("button", { name: "Create API key" }).click();
      const refusal = page.getByRole("alert").filter({ hasText: "quota" });
      await refusal.waitFor();
      expect(await refusal.innerText()).toContain(
        "the org's quota of 3 live API keys would be exceeded (4)",
      );
      expect(await server.database.db.apiKey.count()).toBe(3);
    } finally {
      await browser.close();
    }
  });
});
