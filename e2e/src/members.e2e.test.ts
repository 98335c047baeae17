import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DEMO_USER } from "@thaw/db/seed";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./browser.ts";
import { startWebServer, type WebServer } from "./web-server.ts";

// People join by invitation (issue 23, finding 3), in Chromium against the built server: an
// owner invites an email with a role from the Members page, the invitee opens the one-time
// link, chooses a password and lands in the org with that role; the owner changes the role
// and removes them, and the next request says so.

const screenshots = join(import.meta.dirname, "..", "screenshots");

describe("members by invitation", () => {
  let server: WebServer;
  let browser: Browser;
  let owner: Page;
  let invitee: Page;

  beforeAll(async () => {
    server = await startWebServer();
    browser = await launchChromium();
    owner = await (await browser.newContext()).newPage();
    invitee = await (await browser.newContext()).newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("invites from the Members page; the link makes an account with the role, once", async () => {
    await owner.goto(`${server.baseUrl}/sign-in`);
    await owner.getByLabel("Email").fill(DEMO_USER.email);
    await owner.getByLabel("Password").fill(DEMO_USER.password);
    await owner.getByRole("button", { name: "Sign in" }).click();
    await owner.getByRole("link", { name: "Members" }).click();
    await owner.getByTestId("members-table").waitFor();
    await owner.locator("input[name=invite-email]").fill("ada@example.com");
    await owner.locator("select[name=invite-role]").selectOption("viewer");
    await owner.getByRole("button", { name: "Invite" }).click();
    const link = (await owner.getByTestId("invitation-link").textContent())!;
    expect(link).toMatch(/\/invite\/thawinvite_/);
    await expect
      .poll(() => owner.getByTestId("invitation-row").getAttribute("data-email"))
      .toBe("ada@example.com");
    mkdirSync(screenshots, { recursive: true });
    await owner.screenshot({ path: join(screenshots, "members.png"), fullPage: true });

    await invitee.goto(link);
    expect(await invitee.getByTestId("invitation-summary").textContent()).toContain(
      "ada@example.com is invited as viewer",
    );
    await invitee.getByLabel("Your name").fill("Ada");
    await invitee.getByLabel("Choose a password").fill("ada-password-123");
    await invitee.getByRole("button", { name: "Accept invitation" }).click();
    await invitee.waitForURL(`${server.baseUrl}/`);
    await invitee.getByTestId("org-name").waitFor();
    expect(await invitee.getByTestId("org-name").textContent()).toContain("viewer");

    // The link was spent.
    const again = await (await browser.newContext()).newPage();
    await again.goto(link);
    expect(await again.getByTestId("invitation-error").textContent()).toMatch(/already used/);
  });

  it("a role change and a removal hold from the member's next request", async () => {
    await owner.reload();
    const row = owner.locator('[data-testid="member-row"][data-email="ada@example.com"]');
    await row.getByRole("combobox").selectOption("member");
    await expect
      .poll(async () => {
        await invitee.reload();
        return invitee.getByTestId("org-name").textContent();
      })
      .toContain("member");
    await row.getByRole("button", { name: "Remove" }).click();
    await expect.poll(() => row.count()).toBe(0);
    await invitee.reload();
    await expect.poll(() => invitee.getByText("No organisation yet").count()).toBe(1);
  });
});
