import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createAlertRule, evaluateColdStartAlerts } from "@thaw/core";
import { testNodeRow } from "@thaw/core/testing";
import { DEMO_USER } from "@thaw/db/seed";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./browser.ts";
import { startWebServer, type WebServer } from "./web-server.ts";

// The Alerts page in Chromium against the built server: an owner adds an SLO rule from the
// form; a slow start on a host's 125 MiB/s disk, evaluated as the scheduler's history job
// evaluates it, shows as a firing alert naming its slowest phase and that phase's bound.

const screenshots = join(import.meta.dirname, "..", "screenshots");

describe("the Alerts page", () => {
  let server: WebServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startWebServer();
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("adds a rule from the form and shows a firing alert with its phase and bound", async () => {
    await page.goto(`${server.baseUrl}/sign-in`);
    await page.getByLabel("Email").fill(DEMO_USER.email);
    await page.getByLabel("Password").fill(DEMO_USER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Alerts" }).click();
    await page.getByTestId("alert-rules-table").waitFor();

    await page.locator("input[name=alert-name]").fill("ready within 2 minutes");
    await page.locator("input[name=alert-threshold]").fill("120");
    await page.locator("input[name=alert-objective]").fill("95");
    await page.getByRole("button", { name: "Add rule" }).click();
    await expect
      .poll(() => page.getByTestId("alert-rule-row").first().textContent())
      .toContain("95 % ready within 120 s");

    // A slow start, as an agent would have reported it, on a host with the default gp3 disk.
    const db = server.database.db;
    const actor = { type: "system" as const, orgId: server.orgId };
    await createAlertRule({
      actor,
      input: { kind: "slow_cold_start", name: "slow starts" },
      db,
    });
    const endpoint = await db.endpoint.findFirstOrThrow({
      where: { orgId: server.orgId, deletedAt: null, activeDeploymentId: { not: null } },
    });
    const node = await db.node.create({ data: testNodeRow(server.orgId, { name: "gp3-default" }) });
    const replica = await db.replica.create({
      data: {
        orgId: server.orgId,
        endpointId: endpoint.id,
        deploymentId: endpoint.activeDeploymentId!,
        state: "ready",
      },
    });
    const finishedAt = new Date();
    const start = await db.coldStart.create({
      data: {
        orgId: server.orgId,
        endpointId: endpoint.id,
        deploymentId: endpoint.activeDeploymentId!,
        replicaId: replica.id,
        nodeId: node.id,
        path: "pull",
        locality: "cold",
        predictedSeconds: 70,
        predictedP90Seconds: 95,
        actualSeconds: 160,
        status: "succeeded",
        requestedAt: new Date(finishedAt.getTime() - 160_000),
        readyAt: finishedAt,
        finishedAt,
        phases: {
          create: [
            { sequence: 1, phase: "pull", startedAt: finishedAt, seconds: 30 },
            {
              sequence: 2,
              phase: "load_weights",
              startedAt: finishedAt,
              seconds: 125,
              bytes: BigInt(125 * 125 * 1024 * 1024),
            },
          ],
        },
      },
    });
    await evaluateColdStartAlerts({ db, coldStartId: start.id });

    await page.reload();
    // Both rules fire on it: the slow start, named by its phase and bound, and the SLO it
    // burns (1 of 1 starts past 120 s), each once.
    await expect.poll(() => page.getByTestId("alert-episode-row").count()).toBe(3);
    const summaries = await page.getByTestId("alert-summary").allTextContents();
    expect(summaries).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^pull start took 160\.0 s against a predicted p90 of 95\.0 s; load_weights is disk-read bound at 125 MiB\/s/,
        ),
        expect.stringMatching(/^time-to-ready SLO \(95 % within 120 s\) burning 20\.0× over 1 h/),
      ]),
    );
    expect(await page.getByTestId("alert-episodes-table").textContent()).not.toContain("resolved");
    mkdirSync(screenshots, { recursive: true });
    await page.screenshot({ path: join(screenshots, "alerts.png"), fullPage: true });
  });
});
