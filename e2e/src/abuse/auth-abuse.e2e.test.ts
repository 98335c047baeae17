import { DEMO_USER } from "@thaw/db/seed";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../browser.ts";
import { startWebServer, type WebServer } from "../web-server.ts";
import { rawRequest, rssMiB } from "./probes.ts";

// What an anonymous client could do to sign-in before (issue 23, findings 1–3, 11), tried
// against the built server: password guessing through the HTTP route and through the
// dashboard's form (which called better-auth's API directly, past its limiter), guessing
// with a fresh X-Forwarded-For per try, a 50 MB body to an auth route, and open sign-up.

const ATTEMPTS_PER_ACCOUNT = 5;

describe("sign-in abuse", () => {
  let server: WebServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startWebServer({
      env: { THAW_SIGN_IN_ATTEMPTS_PER_ACCOUNT: String(ATTEMPTS_PER_ACCOUNT) },
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const signIn = (email: string, password: string, headers: Record<string, string> = {}) =>
    fetch(`${server.baseUrl}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.baseUrl, ...headers },
      body: JSON.stringify({ email, password }),
    });

  it("stops guessing one account's password, whatever X-Forwarded-For says, right password included", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < ATTEMPTS_PER_ACCOUNT + 3; i++)
      statuses.push(
        (
          await signIn(DEMO_USER.email, `wrong-password-${i}`, {
            "x-forwarded-for": `198.51.100.${i}`,
          })
        ).status,
      );
    expect(statuses.slice(0, ATTEMPTS_PER_ACCOUNT)).toEqual(
      Array<number>(ATTEMPTS_PER_ACCOUNT).fill(401),
    );
    expect(statuses.slice(ATTEMPTS_PER_ACCOUNT)).toEqual([429, 429, 429]);
    // The guesser found the password now: still refused until the window passes.
    const right = await signIn(DEMO_USER.email.toUpperCase(), DEMO_USER.password);
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0);
    const refusal = (await right.json()) as { error: { code: string; message: string } };
    expect(refusal.error.code).toBe("RATE_LIMITED");
    expect(refusal.error.message).toMatch(/sign-in attempts/);
    // The org's owners see it in their audit log: the failures, then the refusals.
    const audit = await server.database.db.auditLog.findMany({
      where: { orgId: server.orgId, action: { startsWith: "auth." } },
      orderBy: { createdAt: "asc" },
    });
    expect(audit.map((a) => a.action)).toEqual([
      ...Array<string>(ATTEMPTS_PER_ACCOUNT).fill("auth.failed"),
      ...Array<string>(4).fill("auth.rate_limited"),
    ]);
    expect(audit[0]!.metadata).toEqual({ address: "127.0.0.1" });
  });

  it("stops guessing through the dashboard's sign-in form too", async () => {
    const user = await server.database.db.user.create({
      data: {
        id: crypto.randomUUID(),
        email: "form-target@example.com",
        name: "t",
        emailVerified: true,
      },
    });
    const page = await browser.newPage();
    await page.goto(`${server.baseUrl}/sign-in`);
    const messages: string[] = [];
    for (let i = 0; i < ATTEMPTS_PER_ACCOUNT + 1; i++) {
      await page.getByLabel("Email").fill(user.email);
      await page.getByLabel("Password").fill(`not-it-${i}-xxxxxxxx`);
      // The form posts to its server action; read the message the answer rendered.
      const answered = page.waitForResponse(
        (r) => r.request().method() === "POST" && r.url().includes("/sign-in"),
      );
      await page.getByRole("button", { name: "Sign in" }).click();
      await answered;
      await page.getByTestId("sign-in-error").waitFor();
      await expect.poll(() => page.getByRole("button", { name: "Sign in" }).isEnabled()).toBe(true);
      messages.push((await page.getByTestId("sign-in-error").textContent()) ?? "");
    }
    expect(messages.slice(0, ATTEMPTS_PER_ACCOUNT), messages.join(" | ")).toEqual(
      Array<string>(ATTEMPTS_PER_ACCOUNT).fill("Wrong email or password."),
    );
    expect(messages.at(-1)).toMatch(/too many sign-in attempts/i);
    await page.close();
  });

  it("counts every email sign-in: a form-encoded body is refused, a JSON one behind a byte-order mark is counted", async () => {
    const user = await server.database.db.user.create({
      data: {
        id: crypto.randomUUID(),
        email: "bom-target@example.com",
        name: "t",
        emailVerified: true,
      },
    });
    // better-auth takes form bodies too; this route could not count them, so it refuses them.
    const form = await fetch(`${server.baseUrl}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.baseUrl },
      body: new URLSearchParams({ email: user.email, password: "not-it-xxxxxxxx" }).toString(),
    });
    expect(form.status).toBe(400);
    expect(
      ((await form.json()) as { error: { details: { field: string } } }).error.details.field,
    ).toBe("content-type");
    const noEmail = await fetch(`${server.baseUrl}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.baseUrl },
      body: JSON.stringify({ password: "not-it-xxxxxxxx" }),
    });
    expect(noEmail.status).toBe(400);
    expect(
      ((await noEmail.json()) as { error: { details: { field: string } } }).error.details.field,
    ).toBe("body.email");
    // A UTF-8 byte-order mark before the JSON (which fetch's request.json() drops): each try
    // still counts against the account.
    const statuses: number[] = [];
    for (let i = 0; i < ATTEMPTS_PER_ACCOUNT + 1; i++) {
      const response = await fetch(`${server.baseUrl}/api/auth/sign-in/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: server.baseUrl },
        body: "\uFEFF" + JSON.stringify({ email: user.email, password: `not-it-${i}-xxxxxxxx` }),
      });
      statuses.push(response.status);
    }
    expect(statuses.slice(0, ATTEMPTS_PER_ACCOUNT)).toEqual(
      Array<number>(ATTEMPTS_PER_ACCOUNT).fill(401),
    );
    expect(statuses.at(-1)).toBe(429);
  });

  it("refuses a 50 MB body to an auth route with 413 before reading it, memory flat", async () => {
    const before = rssMiB(server.process.pid!);
    const declared = await rawRequest(
      `${server.baseUrl}/api/auth/sign-in/email`,
      "POST",
      { "content-type": "application/json", "content-length": String(50 * 1024 * 1024) },
      { bytes: 50 * 1024 * 1024 },
    );
    // Refused before it was read: the 413, or the connection closed on the sender mid-upload.
    expect([413, 0]).toContain(declared.status);
    // Without Content-Length (chunked), the route counts and stops at its limit.
    const chunked = await rawRequest(
      `${server.baseUrl}/api/auth/update-user`,
      "POST",
      { "content-type": "application/json" },
      { bytes: 50 * 1024 * 1024, chunkBytes: 64 * 1024 },
    );
    expect([413, 0]).toContain(chunked.status);
    const after = rssMiB(server.process.pid!);
    console.log(
      `web RSS around two 50 MB auth bodies: ${before.toFixed(0)} → ${after.toFixed(0)} MiB`,
    );
    expect(after - before).toBeLessThan(40);
  });

  it("refuses a chunked body to a dashboard page (which Next would buffer) with 411", async () => {
    // No cookie, no Content-Length: a page path, where Next reads the body before anything of
    // Thaw's could count it. Refused on the headers, before a byte of the body is sent.
    const page = await rawRequest(
      `${server.baseUrl}/`,
      "POST",
      { "content-type": "text/plain", "transfer-encoding": "chunked" },
      { bytes: 50 * 1024 * 1024, headersFirst: true },
    );
    expect(page.status).toBe(411);
    expect((JSON.parse(page.body) as { error: { code: string } }).error.code).toBe(
      "LENGTH_REQUIRED",
    );
  });

  it("has no open sign-up: an email cannot be claimed before its owner is invited", async () => {
    const signUp = async (email: string) => {
      const response = await fetch(`${server.baseUrl}/api/auth/sign-up/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: server.baseUrl },
        body: JSON.stringify({ email, password: "attacker-pass-1", name: "x" }),
      });
      return { status: response.status, body: await response.text() };
    };
    const unknown = await signUp("ops@gamma.example");
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    expect(unknown.status).toBeLessThan(500);
    expect(await server.database.db.user.count({ where: { email: "ops@gamma.example" } })).toBe(0);
    // …and it says nothing about which addresses have accounts: an existing one is answered
    // exactly like an unknown one.
    expect(await signUp(DEMO_USER.email)).toEqual(unknown);
  });
});
