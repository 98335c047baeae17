import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { API_KEY_SCOPES, type WhatIfReport } from "@thaw/core";
import { syntheticLoadMinutes } from "@thaw/core/testing";
import { DEMO_USER } from "@thaw/db/seed";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./browser.ts";
import { newApiKey, restClient } from "./rest/rest-client.ts";
import { startStack, type Stack } from "./stack.ts";

// The what-if through the built server and a running scheduler: an endpoint's recorded week
// (seeded as the signals route records it, plus a signal sent over REST) replayed by the
// scheduler's whatIf worker, read over REST and on the endpoint page, and applied from there;
// the org's what-ifs limited in Redis before any replay runs.

const SLUG = "llama-3-2-1b-gguf";
/** A demo endpoint nothing sends load to. */
const QUIET = "llama-3-2-3b-instruct";
const screenshots = join(dirname(fileURLToPath(import.meta.url)), "..", "screenshots");

describe("what-if", () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let rest: ReturnType<typeof restClient>;

  beforeAll(async () => {
    // One what-if of the org at a time, so the limit is reached by two.
    stack = await startStack({
      simHosts: "g5.xlarge:1,g6e.xlarge:1",
      webEnv: { THAW_WHAT_IF_PER_ORG: "1" },
    });
    const db = stack.database.db;
    const endpoint = await db.endpoint.findFirstOrThrow({ where: { slug: SLUG } });
    // A week of this endpoint's load, as its signals would have left it.
    const to = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 60_000);
    await db.loadSample.createMany({
      data: syntheticLoadMinutes({
        from: new Date(to.getTime() - 7 * 86_400_000),
        days: 7,
        peak: 10,
        seed: 18,
      }).map((m) => ({ ...m, orgId: stack.orgId, endpointId: endpoint.id })),
    });
    // The sim g5 host priced as the fleet config's on-demand offering would price it.
    await db.node.updateMany({
      where: { orgId: stack.orgId, gpuModel: "A10G" },
      data: { hourlyPriceUsd: 1.006 },
    });
    rest = restClient(stack.baseUrl, await newApiKey(db, stack.orgId, API_KEY_SCOPES));
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    mkdirSync(screenshots, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it("records a load signal's minute and answers the replayed week over REST", async () => {
    const signal = await rest("POST", `/api/v1/endpoints/${SLUG}/signals`, {
      body: { inFlightRequests: 3, queueDepth: 1 },
    });
    expect(signal.status).toBe(200);
    const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const sample = await stack.database.db.loadSample.findFirst({
      where: { endpoint: { slug: SLUG }, minute: { gte: new Date(minute.getTime() - 60_000) } },
      orderBy: { minute: "desc" },
    });
    expect(sample).toMatchObject({ maxConcurrency: 4, signals: 1 });

    const answer = await rest("GET", `/api/v1/endpoints/${SLUG}/what-if`);
    expect(answer.status, answer.text).toBe(200);
    const report = answer.json as WhatIfReport;
    expect(report.status).toBe("ok");
    expect(report.load.minutes).toBeGreaterThan(1_000);
    expect(report.fleet).toMatchObject({ source: "nodes", gpuModel: "A10G", usdPerGpuHour: 1.006 });
    expect(new Set(report.points.map((p) => p.family))).toEqual(
      new Set(["thaw", "pull-keepalive", "lazy-keepalive"]),
    );
    expect(report.points.filter((p) => p.current).map((p) => p.setting)).toEqual(["default"]);
    expect(report.points.find((p) => p.setting === "price 16")?.apply).toEqual({
      gpuSecondsPerWaitSecond: 16,
    });
    for (const p of report.points.filter((p) => p.family !== "thaw")) expect(p.apply).toBeNull();
    for (const p of report.points) expect(p.costUsd).toBeCloseTo(p.gpuHours * 1.006, 1);
  });

  it("answers an endpoint without load at once, with what to do, and a bad window with a 422", async () => {
    const quiet = await rest("GET", `/api/v1/endpoints/${QUIET}/what-if`);
    expect(quiet.status).toBe(200);
    expect(quiet.json).toMatchObject({ status: "no_load", points: [] });
    expect((quiet.json as WhatIfReport).message).toMatch(/signals/);
    const reversed = await rest(
      "GET",
      `/api/v1/endpoints/${SLUG}/what-if?from=2026-11-20T00:00:00Z&to=2026-11-19T00:00:00Z`,
    );
    expect(reversed.status).toBe(422);
    expect(reversed.json).toMatchObject({ error: { details: { field: "query.from" } } });
    const tooLong = await rest(
      "GET",
      `/api/v1/endpoints/${SLUG}/what-if?from=2026-01-01T00:00:00Z`,
    );
    expect(tooLong.status).toBe(422);
    const malformed = await rest("GET", `/api/v1/endpoints/${SLUG}/what-if?from=last-week`);
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ error: { details: { field: "query.from" } } });
  });

  it("limits the org's what-ifs in Redis before any replay: a second run is a 429, the same run is shared", async () => {
    // Two other windows (two runs) at once, with one slot: one replays, the other is refused.
    const to = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const window = (days: number) =>
      `/api/v1/endpoints/${SLUG}/what-if?from=${new Date(to.getTime() - days * 86_400_000).toISOString()}&to=${to.toISOString()}`;
    const windows = [3, 4].map(window);
    const both = await Promise.all(windows.map((path) => rest("GET", path)));
    expect(both.map((a) => a.status).sort()).toEqual([200, 429]);
    const refused = both.find((a) => a.status === 429)!;
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.json).toMatchObject({ error: { code: "RATE_LIMITED" } });
    // The same run asked twice at once is one run: neither is refused.
    const fresh = window(2);
    const same = await Promise.all([rest("GET", fresh), rest("GET", fresh)]);
    expect(same.map((a) => a.status)).toEqual([200, 200]);
    expect((same[0].json as WhatIfReport).points).toEqual((same[1].json as WhatIfReport).points);
  });

  it("shows the frontier on the endpoint page, today's setting marked, and applies another", async () => {
    await page.goto(`${stack.baseUrl}/sign-in`);
    await page.getByLabel("Email").fill(DEMO_USER.email);
    await page.getByLabel("Password").fill(DEMO_USER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("endpoints-table").waitFor();

    await page.goto(`${stack.baseUrl}/endpoints/${SLUG}`);
    const card = page.getByTestId("what-if");
    await card.waitFor();
    await expect
      .poll(() => card.getByTestId("what-if-point").count(), { timeout: 60_000 })
      .toBeGreaterThan(20);
    const today = card.locator('[data-testid="what-if-point"][data-current="true"]');
    expect(await today.count()).toBe(1);
    expect(await today.textContent()).toMatch(/platform default.*\(today\)/);
    // One line per policy family, and today's star.
    const frontier = card.getByTestId("what-if-frontier");
    expect(await frontier.locator(".recharts-scatter").count()).toBe(4);
    expect(await frontier.locator(".recharts-scatter-symbol").count()).toBeGreaterThan(20);
    expect(await card.getByTestId("what-if-summary").textContent()).toMatch(
      /Today \(platform default\): mean wait/,
    );
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: join(screenshots, "endpoint-what-if.png") });

    // Apply thaw at 16 GPU-seconds per second of wait: the endpoint's price, and the marked row.
    const row = card.locator('[data-testid="what-if-point"]', {
      hasText: "16 GPU-s per s of wait",
    });
    await row.getByTestId("what-if-apply").click();
    await expect
      .poll(
        async () =>
          (await stack.database.db.endpoint.findFirstOrThrow({ where: { slug: SLUG } }))
            .gpuSecondsPerWaitSecond,
        { timeout: 15_000 },
      )
      .toBe(16);
    await expect
      .poll(() => today.textContent(), { timeout: 60_000 })
      .toMatch(/16 GPU-s per s of wait.*\(today\)/);
    expect(await page.getByTestId("wait-price-value").textContent()).toBe("16");
    // The fixed policies are comparisons only.
    const fixed = card.locator('[data-testid="what-if-point"]', { hasText: "keep 10m" }).first();
    expect(await fixed.getByTestId("what-if-apply").count()).toBe(0);
  });

  it("tells an endpoint without recorded load to send load signals", async () => {
    await page.goto(`${stack.baseUrl}/endpoints/${QUIET}`);
    const empty = page.getByTestId("what-if-empty");
    await empty.waitFor({ timeout: 30_000 });
    expect(await empty.textContent()).toMatch(/signals/);
  });
});
