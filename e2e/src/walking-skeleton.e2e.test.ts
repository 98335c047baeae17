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

/** The endpoint the test deploys through the wizard, then scales through REST. */
const E2E_SLUG = "e2e-tinyllama";

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

  it("deploys an endpoint through the wizard, with inline validation on the way", async () => {
    await page.getByRole("link", { name: "Deploy endpoint" }).click();
    await page.getByTestId("deploy-wizard").waitFor();
    const next = page.getByTestId("wizard-next");

    // Step 1 refuses to go on without what it needs, and says so next to the field.
    await next.click();
    await expect
      .poll(() => page.getByLabel("Image reference", { exact: true }).getAttribute("aria-invalid"))
      .toBe("true");
    await page
      .getByLabel("Image reference", { exact: true })
      .fill("registry.demo.thaw.dev/e2e/tinyllama:1");
    // The demo's registry is not a real one: the size is given instead of read from it.
    await page.getByLabel("Image size in GB (optional override)", { exact: true }).fill("1.6");
    await next.click();

    // A model source pointing at the machine itself is refused before anything is stored.
    await page.getByLabel("Model source", { exact: true }).fill("file:///etc/passwd");
    await page.getByLabel("Model size in GB (optional override)", { exact: true }).fill("2.2");
    await page.getByLabel("Model format (optional)", { exact: true }).fill("safetensors");
    await next.click();
    await expect
      .poll(() => page.getByLabel("Model source", { exact: true }).getAttribute("aria-invalid"))
      .toBe("true");
    await page
      .getByLabel("Model source", { exact: true })
      .fill("hf://TinyLlama/TinyLlama-1.1B-Chat-v1.0");
    await next.click();

    await page.getByLabel("Endpoint slug", { exact: true }).fill(E2E_SLUG);
    await page.getByLabel("Display name", { exact: true }).fill("E2E TinyLlama");
    await page.getByLabel("GPU type", { exact: true }).fill("A10G");
    await page.getByLabel("Desired replicas", { exact: true }).fill("0");
    await page.getByLabel("Maximum replicas", { exact: true }).fill("2");
    await next.click();
    // Paths and objective: the defaults (every path, mean), and a price of waiting, checked
    // before it is sent.
    const price = page.getByLabel("Price of waiting (optional)", { exact: true });
    await price.fill("-3");
    await next.click();
    await expect.poll(() => price.getAttribute("aria-invalid")).toBe("true");
    await price.fill("12");
    await next.click();
    await page.getByTestId("deploy-review").waitFor();
    await page.screenshot({ path: join(screenshots, "deploy-wizard-review.png"), fullPage: true });
    await page.getByTestId("deploy-submit").click();

    await page.waitForURL(new RegExp(`/endpoints/${E2E_SLUG}$`), { timeout: 20_000 });
    await page.getByTestId("endpoint-detail").waitFor();
    const stored = await stack.database.db.endpoint.findFirstOrThrow({
      where: { slug: E2E_SLUG },
      include: { deployments: true },
    });
    expect(stored).toMatchObject({
      gpuType: "A10G",
      desiredReplicas: 0,
      maxReplicas: 2,
      gpuSecondsPerWaitSecond: 12,
    });
    expect(stored.deployments).toHaveLength(1);
    expect(stored.deployments[0]).toMatchObject({
      status: "active",
      modelSource: "hf://TinyLlama/TinyLlama-1.1B-Chat-v1.0",
    });
    expect(stored.activeDeploymentId).toBe(stored.deployments[0]!.id);
    await page.goto(`${stack.baseUrl}/`);
    await page.getByTestId("endpoints-table").waitFor();
  });

  it("creates an API key, scales the new endpoint through REST with it, and the cold start finishes on the sim fleet", async () => {
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

    const slug = E2E_SLUG;
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
    // The scale-up's own start (the first): a snapshot of the new endpoint may be captured
    // after it, and its replica replaced by a restore start.
    const start = await stack.database.db.coldStart.findFirstOrThrow({
      where: { endpoint: { slug }, status: "succeeded" },
      orderBy: { requestedAt: "asc" },
      include: { phases: true },
    });
    expect(start.phases.map((p) => p.phase)).toContain("ready");
    expect(start.actualSeconds).toBeGreaterThan(0);
    // Its phases reached the browser live: telemetry → Redis pub/sub → server-sent events.
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { liveIds: string[] }).liveIds))
      .toContain(start.id);

    const status = async () =>
      (await (
        await fetch(`${stack.baseUrl}/api/v1/endpoints/${slug}/status`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).json()) as { replicas: { ready: number } };
    // Ready through REST too (polled: a snapshot capture may be replacing the replica).
    await expect.poll(async () => (await status()).replicas.ready, { timeout: 60_000 }).toBe(1);
    await page.screenshot({ path: join(screenshots, "scaled-through-rest.png"), fullPage: true });

    // Its breakdown: the phases as a waterfall, and the options the scheduler weighed.
    const row = page.locator(`[data-testid="cold-start-row"][data-cold-start-id="${start.id}"]`);
    await row.waitFor({ timeout: 15_000 });
    await row.getByRole("button", { name: "Breakdown" }).click();
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

    // The endpoint's breakdown chart: one stacked bar per cold start, a segment per phase.
    await page.goto(`${stack.baseUrl}/endpoints/${slug}`);
    const chart = page.getByTestId("breakdown-chart");
    await chart.waitFor();
    await expect
      .poll(() => chart.locator(".recharts-bar-rectangle").count(), { timeout: 15_000 })
      .toBeGreaterThanOrEqual(start.phases.filter((p) => (p.seconds ?? 0) > 0).length - 1);
    expect(await page.getByTestId("bottleneck-hint").count()).toBeGreaterThan(0);
    await page.screenshot({ path: join(screenshots, "endpoint-breakdown.png"), fullPage: true });

    // Its GPU time: the start and the serving since, on the page and over REST alike.
    const cost = (await (
      await fetch(`${stack.baseUrl}/api/v1/endpoints/${slug}/cost`, {
        headers: { authorization: `Bearer ${key}` },
      })
    ).json()) as { gpuSeconds: { total: number; serving: number; starting: number } };
    expect(cost.gpuSeconds.starting).toBeGreaterThan(0);
    expect(cost.gpuSeconds.serving).toBeGreaterThan(0);
    const costCard = page.getByTestId("endpoint-cost");
    await expect
      .poll(() => costCard.getByTestId("endpoint-cost-totals").textContent(), { timeout: 15_000 })
      .toMatch(/GPU-(s|min|h) — .*serving \d+%.*starting \d+%/);
    expect(await costCard.locator(".recharts-bar-rectangle").count()).toBeGreaterThan(0);
    await costCard.screenshot({ path: join(screenshots, "endpoint-gpu-cost.png") });
    await page.goto(`${stack.baseUrl}/`);
    await page.getByTestId("endpoints-table").waitFor();
  });

  it("shows the endpoint's price of waiting and its predictor's calibration; the price changes from the dashboard", async () => {
    const db = stack.database.db;
    const slug = E2E_SLUG;
    await page.goto(`${stack.baseUrl}/endpoints/${slug}`);
    const price = page.getByTestId("wait-price");
    await price.waitFor();
    expect(await price.getAttribute("data-source")).toBe("endpoint");
    expect(await page.getByTestId("wait-price-value").textContent()).toBe("12");

    // The calibration rests on the succeeded starts that kept a predicted interval: the
    // scale-up's at least (the page re-reads every 5 s; a snapshot restore may add one).
    const withInterval = () =>
      db.coldStart.count({
        where: {
          endpoint: { slug },
          status: "succeeded",
          actualSeconds: { not: null },
          predictedP10Seconds: { not: null },
        },
      });
    await expect
      .poll(
        async () => {
          const starts = await withInterval();
          const shown = (await page.getByTestId("calibration-starts").textContent())?.trim();
          return starts > 0 && shown === String(starts);
        },
        { timeout: 15_000 },
      )
      .toBe(true);
    expect(await page.getByTestId("calibration-share").textContent()).toMatch(/^\d+%$/);
    expect(await page.getByTestId("prediction-calibration").getAttribute("data-verdict")).toBe(
      "too-few-starts",
    );
    // Cold starts show the predicted mean and its p10–p90 interval.
    await expect
      .poll(() => page.getByTestId("predicted-interval").first().textContent(), {
        timeout: 15_000,
      })
      .toMatch(/^\([\d.]+ s–[\d.]+ s\)$/);
    await page.screenshot({ path: join(screenshots, "endpoint-objective.png"), fullPage: true });

    // The org's default, set on the overview's card, holds once the endpoint gives up its own.
    await page.goto(`${stack.baseUrl}/`);
    await page.getByTestId("org-wait-price").fill("6");
    await page.getByTestId("org-settings-save").click();
    await expect
      .poll(
        async () =>
          (await db.org.findFirstOrThrow({ where: { id: stack.orgId } })).gpuSecondsPerWaitSecond,
        { timeout: 15_000 },
      )
      .toBe(6);
    await page.goto(`${stack.baseUrl}/endpoints/${slug}`);
    await page.getByTestId("wait-price-default").click();
    await expect.poll(() => price.getAttribute("data-source"), { timeout: 15_000 }).toBe("org");
    expect(await page.getByTestId("wait-price-value").textContent()).toBe("6");
    expect(
      (await db.endpoint.findFirstOrThrow({ where: { slug } })).gpuSecondsPerWaitSecond,
    ).toBeNull();

    await page.getByTestId("wait-price-input").fill("20");
    await page.getByTestId("wait-price-set").click();
    await expect
      .poll(() => price.getAttribute("data-source"), { timeout: 15_000 })
      .toBe("endpoint");
    expect(await page.getByTestId("wait-price-value").textContent()).toBe("20");
    expect(await db.auditLog.count({ where: { action: "org.settings_changed" } })).toBe(1);
    await page.goto(`${stack.baseUrl}/`);
    await page.getByTestId("endpoints-table").waitFor();
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
