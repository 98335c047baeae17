import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEMO_USER } from "@thaw/db/seed";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./browser.ts";
import { startStack, type Stack } from "./stack.ts";

// Node identity from the dashboard's fleet card, in Chromium against the real stack: an
// admin makes a join token bound to a node, rotates a live sim agent's credential (the agent
// fetches the new one at its next heartbeat), drains a node and revokes it — each audited.

const screenshots = join(dirname(fileURLToPath(import.meta.url)), "..", "screenshots");

describe("fleet card: a node's credential, drain and revoke", () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  const db = () => stack.database.db;
  const row = (name: string) => page.locator(`[data-testid="fleet-row"][data-node-name="${name}"]`);

  beforeAll(async () => {
    stack = await startStack({ simHosts: "g5.xlarge:1,g6e.xlarge:1" });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    await page.goto(`${stack.baseUrl}/sign-in`);
    await page.getByLabel("Email").fill(DEMO_USER.email);
    await page.getByLabel("Password").fill(DEMO_USER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("fleet-table").waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it("makes a join token bound to the node, shown once", async () => {
    await expect.poll(() => page.getByTestId("fleet-row").count(), { timeout: 20_000 }).toBe(2);
    const node = await db().node.findFirstOrThrow({ where: { name: "e2e-g5-xlarge-1" } });
    await row(node.name).getByRole("button", { name: "Rejoin token" }).click();
    const value = row(node.name).getByTestId("rejoin-token-value");
    await value.waitFor();
    expect(await value.textContent()).toMatch(/^thawjoin_[0-9a-f]{12}_/);
    const token = await db().joinToken.findFirstOrThrow({ orderBy: { createdAt: "desc" } });
    expect(token.nodeId).toBe(node.id);
    await row(node.name).getByRole("button", { name: "Done" }).click();
  });

  it("rotates a live agent's credential: the old one stops working once the new one is used", async () => {
    const before = await db().node.findFirstOrThrow({ where: { name: "e2e-g5-xlarge-1" } });
    await row(before.name).getByRole("button", { name: "Rotate credential" }).click();
    await expect
      .poll(
        async () => {
          const node = await db().node.findUniqueOrThrow({ where: { id: before.id } });
          return (
            node.credentialRotationRequestedAt === null &&
            node.credentialHash !== before.credentialHash
          );
        },
        { timeout: 30_000 },
      )
      .toBe(true);
    const rotatedAt = Date.now();
    // It keeps heartbeating with the new one.
    await expect
      .poll(
        async () =>
          (
            await db().node.findUniqueOrThrow({ where: { id: before.id } })
          ).lastHeartbeatAt!.getTime(),
        { timeout: 15_000 },
      )
      .toBeGreaterThan(rotatedAt);
    expect(await row(before.name).getAttribute("data-state")).toBe("ready");
  });

  it("drains, then revokes a node after asking once more; the card says so", async () => {
    const name = "e2e-g6e-xlarge-1";
    await row(name).getByRole("button", { name: "Drain" }).click();
    await row(name).getByRole("button", { name: "Drain" }).click(); // the confirmation
    await expect
      .poll(() => row(name).getAttribute("data-state"), { timeout: 10_000 })
      .toBe("draining");
    await row(name).getByRole("button", { name: "Revoke" }).click();
    mkdirSync(screenshots, { recursive: true });
    await page
      .getByTestId("fleet-table")
      .screenshot({ path: join(screenshots, "fleet-actions.png") });
    await row(name).getByRole("button", { name: "Cancel" }).click();
    expect(await row(name).getAttribute("data-revoked")).toBe("false");
    await row(name).getByRole("button", { name: "Revoke" }).click();
    await row(name).getByRole("button", { name: "Revoke" }).click(); // the confirmation
    await expect
      .poll(() => row(name).getAttribute("data-revoked"), { timeout: 10_000 })
      .toBe("true");
    const node = await db().node.findFirstOrThrow({ where: { name } });
    expect(node.credentialHash).toBeNull();
    const actions = (
      await db().auditLog.findMany({ where: { targetId: node.id }, orderBy: { createdAt: "asc" } })
    ).map((a) => `${a.actorType}:${a.action}`);
    expect(actions).toEqual(expect.arrayContaining(["user:node.drained", "user:node.revoked"]));
    // The revoked agent is cut off: its heartbeats stop landing.
    const stoppedAt = (await db().node.findUniqueOrThrow({ where: { id: node.id } }))
      .lastHeartbeatAt!;
    await new Promise((resolve) => setTimeout(resolve, 7_000));
    expect(
      (await db().node.findUniqueOrThrow({ where: { id: node.id } })).lastHeartbeatAt!.getTime(),
    ).toBe(stoppedAt.getTime());
  });
});
