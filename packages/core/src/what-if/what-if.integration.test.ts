import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import { applyLoadSignal, updateEndpoint } from "../endpoints/index.ts";
import { AppError } from "../errors/index.ts";
import { syntheticLoadMinutes } from "../testing/index.ts";
import { buildEndpointWhatIf } from "./build-endpoint-what-if.ts";
import { getEndpointWhatIf, type RunWhatIf } from "./get-endpoint-what-if.ts";

// The what-if on a real database: load signals record their minute (max, sum, count, under
// concurrent signals), and a week of recorded load replays on the org's priced hosts into a
// frontier whose today's point follows the endpoint's price as the update use case sets it.

const SLUG = "llama-3-2-1b-gguf";

describe("an endpoint's what-if", () => {
  let t: TestDatabase;
  let orgId: string;
  let member: Actor;
  let endpointId: string;
  const now = new Date("2026-11-27T03:00:00Z");
  const from = new Date(now.getTime() - 7 * 86_400_000);

  beforeAll(async () => {
    t = await createTestDatabase();
    const seeded = await seedDemo(t.db);
    orgId = seeded.orgId;
    member = { type: "user", userId: seeded.userId, orgId, role: "member" };
    endpointId = (await t.db.endpoint.findFirstOrThrow({ where: { orgId, slug: SLUG } })).id;
    // Two priced A10G hosts of the org (the demo endpoint's GPU), one without a price.
    for (const [name, price] of [
      ["a10g-1", 1.006],
      ["a10g-2", 1.006],
      ["a10g-hand", null],
    ] as const)
      await t.db.node.create({
        data: {
          orgId,
          name,
          provider: "sim",
          runtime: "sim",
          instanceType: "g5.xlarge",
          gpuModel: "A10G",
          gpuCount: 1,
          vcpus: 4,
          networkGbps: 10,
          diskReadMiBps: 1_000,
          diskWriteMiBps: 1_000,
          pcieGBps: 12,
          hourlyPriceUsd: price,
          state: "ready",
        },
      });
  });
  afterAll(async () => {
    await t.drop();
  });

  it("records each minute's peak, sum and count of signals, concurrent ones included", async () => {
    const minute = new Date("2026-11-27T02:10:00Z");
    const at = (seconds: number) => new Date(minute.getTime() + seconds * 1000);
    await Promise.all(
      [3, 7, 2, 5].map((inFlight, i) =>
        applyLoadSignal({
          actor: member,
          endpoint: SLUG,
          input: { inFlightRequests: inFlight, queueDepth: i === 1 ? 4 : 0 },
          db: t.db,
          now: at(10 + i),
        }),
      ),
    );
    await applyLoadSignal({
      actor: member,
      endpoint: SLUG,
      input: { inFlightRequests: 1 },
      db: t.db,
      now: at(65),
    });
    const samples = await t.db.loadSample.findMany({
      where: { endpointId },
      orderBy: { minute: "asc" },
    });
    expect(
      samples.map(({ orgId: o, minute: m, maxConcurrency, sumConcurrency, signals }) => ({
        o,
        m,
        maxConcurrency,
        sumConcurrency,
        signals,
      })),
    ).toEqual([
      { o: orgId, m: minute, maxConcurrency: 11, sumConcurrency: 21, signals: 4 },
      { o: orgId, m: at(60), maxConcurrency: 1, sumConcurrency: 1, signals: 1 },
    ]);
  });

  it("answers without running anything while no load is recorded in the window", async () => {
    let runs = 0;
    const report = await getEndpointWhatIf({
      actor: member,
      endpoint: SLUG,
      input: { from: "2026-10-01T00:00:00Z", to: "2026-10-08T00:00:00Z" },
      db: t.db,
      now,
      run: () => {
        runs++;
        throw new Error("not expected");
      },
    });
    expect(runs).toBe(0);
    expect(report).toMatchObject({ status: "no_load", points: [], slug: SLUG });
    expect(report.message).toMatch(/signals/);
  });

  it("replays a week on the org's priced hosts: every policy, today's setting marked", async () => {
    await t.db.loadSample.deleteMany({ where: { endpointId } });
    await t.db.loadSample.createMany({
      data: syntheticLoadMinutes({ from, peak: 12, seed: 7 }).map((m) => ({
        ...m,
        orgId,
        endpointId,
      })),
    });
    // A desired count set over REST in the window (counted, not replayed); the autoscaler's own
    // and one before the window are not counted.
    for (const [source, at] of [
      ["api", new Date(now.getTime() - 86_400_000)],
      ["signal", new Date(now.getTime() - 86_400_000)],
      ["dashboard", new Date(from.getTime() - 60_000)],
    ] as const)
      await t.db.scaleEvent.create({
        data: {
          orgId,
          endpointId,
          source,
          previousDesired: 0,
          desired: 1,
          actorType: "system",
          createdAt: at,
        },
      });
    const report = await buildEndpointWhatIf({
      actor: { type: "system", orgId },
      endpoint: endpointId,
      db: t.db,
      now,
      snapshotsEnabled: true,
    });
    expect(report.load.manualScaleEvents).toBe(1);
    expect(report.message).toMatch(/1 desired count\(s\) set by hand or over REST/);
    expect(report.status).toBe("ok");
    expect(report.from).toBe(from.toISOString());
    expect(report.fleet).toMatchObject({ source: "nodes", gpuModel: "A10G", usdPerGpuHour: 1.006 });
    // Grown to hold the endpoint's maxReplicas (4) as the fleet worker would.
    expect(report.fleet.hosts).toBe(4);
    expect(report.current).toEqual({ gpuSecondsPerWaitSecond: null, source: "platform" });
    const thaw = report.points.filter((p) => p.family === "thaw");
    expect(thaw.map((p) => p.setting)).toContain("default");
    expect(report.points.filter((p) => p.current).map((p) => p.setting)).toEqual(["default"]);
    expect(report.points.some((p) => p.family === "pull-keepalive" && p.apply === null)).toBe(true);
    for (const p of report.points) {
      expect(p.gpuHours).toBeGreaterThan(0);
      expect(p.idleGpuHours).toBeLessThanOrEqual(p.gpuHours);
      expect(p.costUsd).toBeCloseTo(p.gpuHours * 1.006, 1);
    }
    // The pull keep-alives: a longer keep-alive never waits more and never idles less.
    const pull = report.points.filter((p) => p.family === "pull-keepalive");
    expect(pull.at(-1)!.idleGpuHours).toBeGreaterThan(pull[0]!.idleGpuHours);
    expect(pull.at(-1)!.meanWaitSeconds).toBeLessThan(pull[0]!.meanWaitSeconds);
    expect(report.load.minutes).toBeGreaterThan(1_000);
    expect(report.load.peakConcurrency).toBeGreaterThan(0);
  });

  it("shares a run between views, and a new price (applied through the update) makes a new one", async () => {
    const keys: string[] = [];
    const run: RunWhatIf = async (payload) => {
      keys.push(payload.key);
      return buildEndpointWhatIf({
        actor: { type: "system", orgId: payload.orgId },
        endpoint: payload.endpointId,
        input: { from: payload.from, to: payload.to },
        db: t.db,
        now,
        snapshotsEnabled: false,
      });
    };
    const view = () => getEndpointWhatIf({ actor: member, endpoint: SLUG, db: t.db, now, run });
    const first = await view();
    await view();
    expect(keys[1]).toBe(keys[0]);
    const point = first.points.find((p) => p.setting === "price 16")!;
    expect(point.apply).toEqual({ gpuSecondsPerWaitSecond: 16 });
    // Apply: the endpoint update use case (a member may update endpoints).
    await updateEndpoint({
      actor: member,
      endpoint: SLUG,
      input: point.apply,
      db: t.db,
      source: "dashboard",
    });
    const after = await view();
    expect(keys[2]).not.toBe(keys[0]);
    expect(after.current).toEqual({ gpuSecondsPerWaitSecond: 16, source: "endpoint" });
    expect(after.points.filter((p) => p.current).map((p) => p.setting)).toEqual(["price 16"]);
    // Same load, same seed: the point it applied is the point it shows now.
    const now16 = after.points.find((p) => p.current)!;
    expect(now16.meanWaitSeconds).toBe(point.meanWaitSeconds);
    expect(now16.idleGpuHours).toBe(point.idleGpuHours);
    // The default is appliable (the org sets no price) and clears the endpoint's.
    expect(after.points.find((p) => p.setting === "default")!.apply).toEqual({
      gpuSecondsPerWaitSecond: null,
    });
  });

  it("is another org's endpoint's 404, and a bad window's 422 naming the field", async () => {
    const other = await t.db.org.create({ data: { slug: "other-org", name: "Other" } });
    const stranger: Actor = { type: "system", orgId: other.id };
    const run: RunWhatIf = () => Promise.reject(new Error("not expected"));
    await expect(
      getEndpointWhatIf({ actor: stranger, endpoint: endpointId, db: t.db, now, run }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    const error = await getEndpointWhatIf({
      actor: member,
      endpoint: SLUG,
      input: { from: "2026-11-26T00:00:00Z", to: "2026-11-25T00:00:00Z" },
      db: t.db,
      now,
      run,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: "UNPROCESSABLE", details: { field: "query.from" } });
  });
});
