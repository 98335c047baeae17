import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEMO_ENDPOINTS, DEMO_USER } from "@thaw/db/seed";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./browser.ts";
import { startStack, type Stack } from "./stack.ts";

// The walking skeleton, every arrow real: sign in → seeded endpoints through tRPC → the
// scheduler's health from its heartbeats → sim hosts that joined with join tokens and
// whose heartbeats keep updating.

const screenshots = join(dirname(fileURLToPath(import.meta.url)), "..", "screenshots");

describe("walking skeleton", () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    stack = await startStack({ simHosts: "g5.xlarge:1,g6e.xlarge:1" });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    mkdirSync(screenshots, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it("sends a signed-out visitor to the sign-in page", async () => {
    await page.goto(`${stack.baseUrl}/`);
    await page.waitForURL(/\/sign-in/);
    await expect.poll(() => page.getByRole("button", { name: "Sign in" }).isVisible()).toBe(true);
  });

  it("refuses a wrong password with a message, and stays signed out", async () => {
    await page.getByLabel("Email").fill(DEMO_USER.email);
    await page.getByLabel("Password").fill("not-the-password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("sign-in-error").waitFor();
    expect(await page.getByTestId("sign-in-error").textContent()).toMatch(/email or password/i);
    expect(page.url()).toMatch(/\/sign-in/);
  });

  it("signs in and shows the seeded endpoints, the healthy scheduler and the live sim fleet", async () => {
    await page.getByLabel("Email").fill(DEMO_USER.email);
    await page.getByLabel("Password").fill(DEMO_USER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("endpoints-table").waitFor();
    // The table renders its loading state first; the rows come with the first tRPC answer.
    await expect
      .poll(() => page.getByTestId("endpoint-row").count(), { timeout: 15_000 })
      .toBe(DEMO_ENDPOINTS.length);

    const slugs = await page
      .getByTestId("endpoint-row")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-slug")));
    expect(slugs.sort()).toEqual(DEMO_ENDPOINTS.map((e) => e.slug).sort());
    expect(await page.getByTestId("user-email").textContent()).toContain(DEMO_USER.email);

    await expect
      .poll(() => page.getByTestId("scheduler-status").getAttribute("data-healthy"), {
        timeout: 20_000,
      })
      .toBe("true");

    const fleet = page.getByTestId("fleet-row");
    await expect.poll(() => fleet.count(), { timeout: 20_000 }).toBe(2);
    const states = await fleet.evaluateAll((rows) =>
      rows.map((r) => `${r.getAttribute("data-node-name")}:${r.getAttribute("data-state")}`),
    );
    expect(states.sort()).toEqual(["e2e-g5-xlarge-1:ready", "e2e-g6e-xlarge-1:ready"]);

    // Heartbeats keep arriving: the stored timestamp moves, and the page keeps it fresh.
    const node = await stack.database.db.node.findFirstOrThrow({
      where: { name: "e2e-g5-xlarge-1" },
    });
    await expect
      .poll(
        async () =>
          (
            await stack.database.db.node.findUniqueOrThrow({ where: { id: node.id } })
          ).lastHeartbeatAt!.getTime(),
        { timeout: 15_000 },
      )
      .toBeGreaterThan(node.lastHeartbeatAt!.getTime());
    const ages = await page
      .getByTestId("heartbeat-age")
      .evaluateAll((cells) => cells.map((c) => Number(c.getAttribute("data-seconds"))));
    for (const age of ages) expect(age).toBeLessThan(15);

    await page.screenshot({ path: join(screenshots, "dashboard.png"), fullPage: true });
  });

  it("creates an API key, scales through REST with it, and the cold start finishes on the sim fleet", async () => {
    await page.getByLabel("Name").fill("e2e autoscaler");
    await page.getByRole("button", { name: "Create API key" }).click();
    const key = (await page.getByTestId("api-key-value").textContent())?.trim() ?? "";
    expect(key).toMatch(/^thaw_[0-9a-f]{12}_/);

    // Listen to the dashboard's live stream as the page does (session cookie, /api/live).
    await page.evaluate(() => {
      const w = window as unknown as { liveIds: string[] };
      w.liveIds = [];
      new EventSource("/api/live").addEventListener("cold_starts", (event) => {
        w.liveIds.push(
          ...(JSON.parse(event.data as string) as { coldStartIds: string[] }).coldStartIds,
        );
      });
    });

    const slug = "llama-3-2-1b-gguf";
    const scaled = await fetch(`${stack.baseUrl}/api/v1/endpoints/${slug}/replicas`, {
      method: "PUT",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "idempotency-key": "e2e-scale-1",
      },
      body: JSON.stringify({ replicas: 1 }),
    });
    expect(scaled.status).toBe(200);
    expect(await scaled.json()).toMatchObject({ slug, desiredReplicas: 1 });

    // The dashboard shows the replica ready (ready / warm / starting) once its phases are in.
    const replicas = page
      .locator(`[data-testid="endpoint-row"][data-slug="${slug}"]`)
      .getByTestId("endpoint-replicas");
    await expect
      .poll(async () => (await replicas.textContent())?.trim(), { timeout: 60_000 })
      .toMatch(/^1 \//);
    const start = await stack.database.db.coldStart.findFirstOrThrow({
      where: { endpoint: { slug }, status: "succeeded" },
      include: { phases: true },
    });
    expect(start.phases.map((p) => p.phase)).toContain("ready");
    expect(start.actualSeconds).toBeGreaterThan(0);
    // Its phases reached the browser live: telemetry → Redis pub/sub → server-sent events.
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { liveIds: string[] }).liveIds))
      .toContain(start.id);

    const status = await fetch(`${stack.baseUrl}/api/v1/endpoints/${slug}/status`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(await status.json()).toMatchObject({ replicas: { ready: 1 } });
    await page.screenshot({ path: join(screenshots, "scaled-through-rest.png"), fullPage: true });

    // Its breakdown: the phases as a waterfall, and the options the scheduler weighed.
    const row = page.locator(
      `[data-testid="cold-start-row"][data-endpoint="${slug}"][data-status="succeeded"]`,
    );
    await row.first().waitFor({ timeout: 15_000 });
    await row.first().getByRole("button", { name: "Breakdown" }).click();
    const detail = page.getByTestId("cold-start-detail");
    await detail.waitFor();
    await expect
      .poll(() =>
        detail
          .getByTestId("phase")
          .evaluateAll((els) => els.map((e) => e.getAttribute("data-phase"))),
      )
      .toEqual(start.phases.sort((a, b) => a.sequence - b.sequence).map((p) => p.phase));
    expect(await page.getByTestId("cold-start-options").textContent()).toContain("chosen");
    await detail.screenshot({ path: join(screenshots, "cold-start-breakdown.png") });
  });

  it("shows the scheduler as down once it stops", async () => {
    await stack.stopProcess("scheduler");
    await expect
      .poll(() => page.getByTestId("scheduler-status").getAttribute("data-healthy"), {
        timeout: 10_000,
      })
      .toBe("false");
    await page.screenshot({ path: join(screenshots, "scheduler-down.png"), fullPage: true });
  });
});
