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
