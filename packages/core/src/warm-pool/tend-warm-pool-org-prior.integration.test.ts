import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import { createEndpoint } from "../endpoints/index.ts";
import {
  emptyIdleTimeHistogram,
  HISTOGRAM_BIN_SECONDS,
  type IdleTimeHistogram,
} from "../scheduling/index.ts";
import { TEST_DEPLOYMENT } from "../testing/index.ts";
import { tendWarmPool } from "./tend-warm-pool.ts";
import { loadOrgIdleTimes, OrgIdleTimesMemo } from "./warm-pool-memory.ts";

// A new endpoint has no idle times of its own; the warm pool starts it from how its org's other
// endpoints pause (their histograms summed), and never from another org's.

const NOW = new Date("2026-11-25T12:00:00Z");
/** A miss costs two minutes; at 10 GPU-seconds per second of wait, that is 1200 GPU-seconds. */
const BEST_NON_WARM_SECONDS = 120;
const PRICE = 10;

function idleTimes(seconds: number, count: number): IdleTimeHistogram {
  const histogram = emptyIdleTimeHistogram();
  const bin = Math.floor(seconds / HISTOGRAM_BIN_SECONDS);
  if (bin >= histogram.bins.length) histogram.outOfBounds = count;
  else histogram.bins[bin] = count;
  return histogram;
}

describe("tendWarmPool's prior for a thin endpoint: its org's idle times", () => {
  let t: TestDatabase;
  let serial = 0;

  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  async function org() {
    const row = await t.db.org.create({ data: { slug: `prior-${++serial}`, name: "Prior" } });
    return { type: "system", orgId: row.id } satisfies Actor;
  }

  async function endpoint(actor: Actor, histogram: IdleTimeHistogram, idleForSeconds: number) {
    const { result } = await createEndpoint({
      actor,
      input: {
        slug: `endpoint-${++serial}`,
        name: "Prior",
        gpuType: "L40S",
        maxReplicas: 2,
        gpuSecondsPerWaitSecond: PRICE,
        deployment: TEST_DEPLOYMENT,
      },
      source: "api",
      db: t.db,
    });
    await t.db.endpointWarmPool.create({
      data: {
        endpointId: result.id,
        orgId: actor.orgId,
        histogram: { bins: histogram.bins, outOfBounds: histogram.outOfBounds },
        idleSince: new Date(NOW.getTime() - idleForSeconds * 1000),
        bestNonWarmSeconds: BEST_NON_WARM_SECONDS,
      },
    });
    return result.id;
  }

  const warmReplicas = async (endpointId: string) =>
    (await tendWarmPool({ db: t.db, endpointId, options: { gpuBudget: 4 }, now: NOW })).plan
      ?.warmReplicas;

  it("keeps a new endpoint warm where its org's requests come back in 2.5 minutes, not where they come back after hours", async () => {
    const quick = await org();
    await endpoint(quick, idleTimes(150, 30), 0);
    await endpoint(quick, idleTimes(150, 30), 0);
    const slow = await org();
    await endpoint(slow, idleTimes(6 * 3600, 30), 0);
    await endpoint(slow, idleTimes(6 * 3600, 30), 0);

    // Keeping a replica 2.5 minutes costs 150 GPU-seconds against a 1200 GPU-second miss;
    // keeping it past 4 h costs 14 400.
    expect(await warmReplicas(await endpoint(quick, emptyIdleTimeHistogram(), 30))).toBe(1);
    expect(await warmReplicas(await endpoint(slow, emptyIdleTimeHistogram(), 30))).toBe(0);
  });

  it("sums only the org's own endpoints, leaving out the one planned for", async () => {
    const mine = await org();
    const other = await org();
    const a = await endpoint(mine, idleTimes(150, 5), 0);
    await endpoint(mine, idleTimes(90, 7), 0);
    await endpoint(mine, idleTimes(6 * 3600, 2), 0);
    await endpoint(other, idleTimes(150, 1000), 0);

    const pooled = await loadOrgIdleTimes(t.db, mine.orgId, a);
    expect(pooled?.bins[Math.floor(90 / HISTOGRAM_BIN_SECONDS)]).toBe(7);
    expect(pooled?.bins[Math.floor(150 / HISTOGRAM_BIN_SECONDS)]).toBe(0);
    expect(pooled?.outOfBounds).toBe(2);
    expect(await loadOrgIdleTimes(t.db, (await org()).orgId, a)).toBeNull();
  });

  it("a scheduler's memo gives the same prior from one read of the org a while, its endpoint taken out", async () => {
    const mine = await org();
    const a = await endpoint(mine, idleTimes(150, 5), 0);
    const b = await endpoint(mine, idleTimes(90, 7), 0);
    await endpoint(mine, idleTimes(6 * 3600, 2), 0);
    let now = 0;
    const memo = new OrgIdleTimesMemo(60_000, () => now);
    const mineOf = async (id: string) =>
      (await t.db.endpointWarmPool.findUniqueOrThrow({ where: { endpointId: id } }))
        .histogram as unknown as IdleTimeHistogram;
    for (const id of [a, b])
      expect(await memo.load(t.db, mine.orgId, await mineOf(id))).toEqual(
        await loadOrgIdleTimes(t.db, mine.orgId, id),
      );
    // Within the minute a new endpoint's idle times are not seen; after it, they are.
    await endpoint(mine, idleTimes(90, 3), 0);
    const bin90 = Math.floor(90 / HISTOGRAM_BIN_SECONDS);
    expect((await memo.load(t.db, mine.orgId, await mineOf(a)))?.bins[bin90]).toBe(7);
    now = 61_000;
    expect((await memo.load(t.db, mine.orgId, await mineOf(a)))?.bins[bin90]).toBe(10);
    // An org with nothing recorded has no prior.
    expect(await memo.load(t.db, (await org()).orgId, emptyIdleTimeHistogram())).toBeNull();
  });

  it("tendings that find the org's sum due together share one read of it", async () => {
    const mine = await org();
    await endpoint(mine, idleTimes(150, 5), 0);
    const memo = new OrgIdleTimesMemo(60_000, () => 0);
    let reads = 0;
    const counting = {
      $queryRaw: (...args: Parameters<typeof t.db.$queryRaw>) => {
        reads++;
        return t.db.$queryRaw(...args);
      },
    } as unknown as typeof t.db;
    const priors = await Promise.all(
      Array.from({ length: 5 }, () => memo.load(counting, mine.orgId, emptyIdleTimeHistogram())),
    );
    // loadOrgIdleTimes is two statements (the bins, then the out-of-bounds count).
    expect(reads).toBe(2);
    for (const prior of priors)
      expect(prior?.bins[Math.floor(150 / HISTOGRAM_BIN_SECONDS)]).toBe(5);
  });
});
