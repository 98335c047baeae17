import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import { createEndpoint } from "../endpoints/index.ts";
import { emptyIdleTimeHistogram, HISTOGRAM_BIN_SECONDS } from "../scheduling/index.ts";
import { TEST_DEPLOYMENT } from "../testing/index.ts";
import { BestNonWarmMemo } from "./best-non-warm-memo.ts";
import { tendWarmPool } from "./tend-warm-pool.ts";

// The warm pool tends each endpoint to the objective its users chose: the price of
// waiting that holds for it (its own, else its org's default) and its org's GPU budget (else
// the operator's THAW_WARM_POOL_GPU_BUDGET, what the scheduler passes as options.gpuBudget).

const NOW = new Date("2026-11-25T12:00:00Z");
/** A miss costs two minutes of wait: far more than a few idle GPU-minutes at any real price. */
const BEST_NON_WARM_SECONDS = 120;

describe("tendWarmPool under the org's and endpoint's objective", () => {
  let t: TestDatabase;
  let orgId: string;
  let system: Actor;
  let serial = 0;

  beforeAll(async () => {
    t = await createTestDatabase();
    ({ orgId } = await seedDemo(t.db));
    system = { type: "system", orgId };
  });
  afterAll(async () => {
    await t.drop();
  });

  /**
   * An endpoint whose requests have always come back two to three minutes after it went idle,
   * idle for 30 s now: squarely inside any keep-alive worth keeping.
   */
  async function idleEndpoint(gpuSecondsPerWaitSecond: number | null) {
    const { result: endpoint } = await createEndpoint({
      actor: system,
      input: {
        slug: `objective-${++serial}`,
        name: "Objective",
        gpuType: "L40S",
        maxReplicas: 2,
        gpuSecondsPerWaitSecond,
        deployment: TEST_DEPLOYMENT,
      },
      source: "api",
      db: t.db,
    });
    const histogram = emptyIdleTimeHistogram();
    histogram.bins[Math.floor(150 / HISTOGRAM_BIN_SECONDS)] = 40;
    await t.db.endpointWarmPool.create({
      data: {
        endpointId: endpoint.id,
        orgId,
        histogram: { bins: histogram.bins, outOfBounds: histogram.outOfBounds },
        idleSince: new Date(NOW.getTime() - 30_000),
        bestNonWarmSeconds: BEST_NON_WARM_SECONDS,
      },
    });
    return endpoint.id;
  }
  const setOrg = (data: {
    gpuSecondsPerWaitSecond?: number | null;
    warmPoolGpuBudget?: number | null;
  }) => t.db.org.update({ where: { id: orgId }, data });
  const warmReplicas = async (endpointId: string, gpuBudget: number) =>
    (await tendWarmPool({ db: t.db, endpointId, options: { gpuBudget }, now: NOW })).plan
      ?.warmReplicas;

  it("keeps a replica warm at a generous price, and none at price 0", async () => {
    await setOrg({ gpuSecondsPerWaitSecond: null, warmPoolGpuBudget: null });
    expect(await warmReplicas(await idleEndpoint(100_000), 4)).toBeGreaterThanOrEqual(1);
    expect(await warmReplicas(await idleEndpoint(0), 4)).toBe(0);
  });

  it("follows the org's default price when the endpoint sets none", async () => {
    await setOrg({ gpuSecondsPerWaitSecond: 0, warmPoolGpuBudget: null });
    expect(await warmReplicas(await idleEndpoint(null), 4)).toBe(0);
    await setOrg({ gpuSecondsPerWaitSecond: 100_000 });
    expect(await warmReplicas(await idleEndpoint(null), 4)).toBeGreaterThanOrEqual(1);
  });

  it("holds within the org's own budget over the operator's default, either way", async () => {
    await setOrg({ gpuSecondsPerWaitSecond: 100_000, warmPoolGpuBudget: 0 });
    expect(await warmReplicas(await idleEndpoint(null), 4)).toBe(0);
    await setOrg({ warmPoolGpuBudget: 2 });
    expect(await warmReplicas(await idleEndpoint(null), 0)).toBeGreaterThanOrEqual(1);
    await setOrg({ warmPoolGpuBudget: null });
    expect(await warmReplicas(await idleEndpoint(null), 0)).toBe(0);
  });

  it("uses a remembered miss cost while it is fresh and for the deployment it was made for", async () => {
    const endpointId = await idleEndpoint(100_000);
    const { activeDeploymentId } = await t.db.endpoint.findUniqueOrThrow({
      where: { id: endpointId },
    });
    const memo = new BestNonWarmMemo(60_000, () => NOW.getTime());
    const tend = () =>
      tendWarmPool({
        db: t.db,
        endpointId,
        options: { gpuBudget: 4, bestNonWarm: memo },
        now: NOW,
      });
    const stored = async () =>
      (await t.db.endpointWarmPool.findUniqueOrThrow({ where: { endpointId } })).bestNonWarmSeconds;
    // Remembered: used as predicted (and kept in the endpoint's memory), nothing re-predicted.
    memo.remember(endpointId, { deploymentId: activeDeploymentId!, seconds: 7 });
    await tend();
    expect(await stored()).toBe(7);
    expect(memo.fresh(endpointId)).toEqual({ deploymentId: activeDeploymentId, seconds: 7 });
    // Made for another deployment: not used, and forgotten so that the next tending predicts.
    memo.remember(endpointId, { deploymentId: crypto.randomUUID(), seconds: 3 });
    await tend();
    expect(await stored()).toBe(7);
    expect(memo.fresh(endpointId)).toBeUndefined();
    await tend();
    // This org has no L40S node: no feasible start, which is remembered as such.
    expect(memo.fresh(endpointId)).toEqual({ deploymentId: activeDeploymentId, seconds: null });
  });
  it("shares a prediction with the other schedulers until it is due, for its deployment only", async () => {
    const endpointId = await idleEndpoint(100_000);
    const { activeDeploymentId } = await t.db.endpoint.findUniqueOrThrow({
      where: { id: endpointId },
    });
    /** A scheduler process: its own memo, the shared row. */
    const tendIn = (memo: BestNonWarmMemo, now = NOW) =>
      tendWarmPool({
        db: t.db,
        endpointId,
        options: { gpuBudget: 4, bestNonWarm: memo },
        now,
      });
    const row = () => t.db.endpointWarmPool.findUniqueOrThrow({ where: { endpointId } });
    const share = (data: {
      bestNonWarmPredictedFor: string;
      bestNonWarmPredictedSeconds: number | null;
      bestNonWarmFreshUntil: Date;
    }) => t.db.endpointWarmPool.update({ where: { endpointId }, data });
    // The first scheduler predicts (no L40S node in this org: no feasible start) and shares it
    // for the lifetime it keeps it itself.
    await tendIn(new BestNonWarmMemo(60_000, () => NOW.getTime()));
    expect(await row()).toMatchObject({
      bestNonWarmPredictedFor: activeDeploymentId,
      bestNonWarmPredictedSeconds: null,
      bestNonWarmFreshUntil: new Date(NOW.getTime() + 60_000),
    });
    // Another scheduler takes the shared figure rather than predicting its own: 9 s here,
    // which no prediction on this fleet would give.
    await share({
      bestNonWarmPredictedFor: activeDeploymentId!,
      bestNonWarmPredictedSeconds: 9,
      bestNonWarmFreshUntil: new Date(NOW.getTime() + 20_000),
    });
    let nowMs = NOW.getTime();
    const second = new BestNonWarmMemo(60_000, () => nowMs);
    await tendIn(second);
    expect((await row()).bestNonWarmSeconds).toBe(9);
    expect(second.fresh(endpointId)).toEqual({ deploymentId: activeDeploymentId, seconds: 9 });
    // …for what is left of its lifetime only.
    nowMs += 20_001;
    expect(second.fresh(endpointId)).toBeUndefined();
    // Due, or made for another deployment: predicted again, and the new one shared.
    for (const stale of [
      { bestNonWarmPredictedFor: activeDeploymentId!, bestNonWarmFreshUntil: NOW },
      {
        bestNonWarmPredictedFor: crypto.randomUUID(),
        bestNonWarmFreshUntil: new Date(NOW.getTime() + 20_000),
      },
    ]) {
      await share({ ...stale, bestNonWarmPredictedSeconds: 9 });
      const memo = new BestNonWarmMemo(60_000, () => NOW.getTime());
      await tendIn(memo);
      expect(memo.fresh(endpointId)).toEqual({ deploymentId: activeDeploymentId, seconds: null });
      expect(await row()).toMatchObject({
        bestNonWarmPredictedFor: activeDeploymentId,
        bestNonWarmPredictedSeconds: null,
        bestNonWarmFreshUntil: new Date(NOW.getTime() + 60_000),
      });
    }
  });
});
