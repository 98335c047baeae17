import { mkdirSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { DEMO_USER } from "@thaw/db/seed";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./browser.ts";
import { startWebServer, type WebServer } from "./web-server.ts";

// The Webhooks page in Chromium against the built server: an owner adds a webhook and sees its
// secret once, reads a delivery's log with the receiver's status code, redelivers it, rotates
// the secret (a new one, shown once), and deletes the webhook.

const screenshots = join(import.meta.dirname, "..", "screenshots");

describe("the Webhooks page", () => {
  let server: WebServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startWebServer({
      env: { THAW_CREDENTIALS_KEY: randomBytes(32).toString("base64") },
    });
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("adds, shows the secret once, logs deliveries, redelivers, rotates and deletes", async () => {
    await page.goto(`${server.baseUrl}/sign-in`);
    await page.getByLabel("Email").fill(DEMO_USER.email);
    await page.getByLabel("Password").fill(DEMO_USER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByTestId("webhooks-table").waitFor();

    // A private address is refused, named by field.
    await page.locator("input[name=webhook-url]").fill("https://10.0.0.5/hook");
    await page.getByRole("button", { name: "Add webhook" }).click();
    await expect.poll(() => page.locator(".form-error").textContent()).toContain("url");

    await page.locator("input[name=webhook-url]").fill("https://hooks.example.com/thaw");
    await page.locator("input[name=webhook-description]").fill("on-call");
    await page.getByRole("button", { name: "Add webhook" }).click();
    const secret = (await page.getByTestId("webhook-secret-value").textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await expect.poll(() => page.getByTestId("webhook-row").count()).toBe(1);

    // A delivery that failed with a 500 after three attempts, as the worker would leave it.
    const db = server.database.db;
    const hook = await db.webhookSubscription.findFirstOrThrow({ where: { orgId: server.orgId } });
    const delivery = await db.webhookDelivery.create({
      data: {
        orgId: server.orgId,
        subscriptionId: hook.id,
        messageId: "msg_e2e_page",
        eventType: "cold_start.failed",
        payload: { type: "cold_start.failed", timestamp: new Date().toISOString(), data: {} },
        status: "failed",
        attempts: 3,
        lastStatusCode: 500,
        attemptLog: {
          create: [1, 2, 3].map((attempt) => ({
            attempt,
            statusCode: 500,
            errorClass: "http_5xx",
            error: "the receiver answered 500",
            durationMs: 12,
          })),
        },
      },
    });
    await page.getByRole("button", { name: "Done" }).click();
    await expect.poll(() => page.getByTestId("webhook-secret").count()).toBe(0);
    await page.getByRole("button", { name: "Deliveries" }).click();
    const row = page.getByTestId("webhook-delivery-row");
    await expect.poll(() => row.textContent()).toContain("500 in 12 ms");
    expect(await row.textContent()).toContain("failed");
    mkdirSync(screenshots, { recursive: true });
    await page.screenshot({ path: join(screenshots, "webhooks.png"), fullPage: true });
    await row.getByRole("button", { name: "Redeliver" }).click();
    await expect
      .poll(
        async () =>
          (await db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).status,
      )
      .toBe("pending");
    await expect.poll(() => row.textContent()).toContain("pending");

    await page.getByRole("button", { name: "Rotate secret" }).click();
    const rotated = (await page.getByTestId("webhook-secret-value").textContent())!;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    // The page never shows a secret again once dismissed, nor does a reload.
    await page.reload();
    await page.getByTestId("webhooks-table").waitFor();
    expect(await page.content()).not.toContain(rotated.slice(6));

    await page.getByRole("button", { name: "Delete" }).click();
    await expect.poll(() => page.getByTestId("webhook-row").count()).toBe(0);
  });
});
