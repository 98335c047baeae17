import { SWEEP_SLICE_ENDPOINTS, SWEEP_SLICES_PER_TICK } from "@thaw/core";
import { useTestDatabase } from "@thaw/db/testing";
import { afterAll, describe, expect, it } from "vitest";
import { useTestQueues } from "../testing/test-queues.ts";
import { takeSweepSlice } from "./take-sweep-slice.ts";

// The sweep's walk is one for the whole control plane: schedulers ticking at once queue a
// slice once, the walk moves on across them, and it survives a wiped or unreadable record.

describe("takeSweepSlice", () => {
  const testDb = useTestDatabase();
  const prefix = `test-sweep-walk-${Date.now()}`;
  // A tick of 600 ms (its lock lives 540 ms); a round is due again 9 s after it began, far
  // beyond this test's own ticks even on a loaded machine.
  const sweepMs = 9_000;
  const redis = useTestQueues(prefix);

  afterAll(async () => {
    await redis.producer.del(`${prefix}:sweep-walk`, `${prefix}:sweep-walk:tick`);
  });

  const take = (instanceId: string) =>
    takeSweepSlice({
      db: testDb.current.db,
      redis: redis.producer,
      queues: redis.queues,
      prefix,
      instanceId,
      sweepMs,
    });
  const nextTick = () => new Promise((resolve) => setTimeout(resolve, 600));
  /** The endpoints of the sweep's waiting slice, as its worker would take them: the test drains it. */
  const drainSweepJobs = async () => {
    const jobs = await redis.queues.sweep.getWaiting();
    await Promise.all(jobs.map((job) => job.remove()));
    // At most one slice waits (the walk waits for it), and nothing on the live queues.
    expect(jobs.length).toBeLessThanOrEqual(1);
    expect(await redis.queues.reconcile.getWaitingCount()).toBe(0);
    expect(await redis.queues.warmPool.getWaitingCount()).toBe(0);
    return jobs.flatMap((job) => (job.data as { endpointIds: string[] }).endpointIds).sort();
  };

  it("queues each endpoint once a round, whichever scheduler takes the tick", async () => {
    const db = testDb.current.db;
    const org = await db.org.create({ data: { slug: "walk", name: "Walk" } });
    // Three endpoints: a round spread over the period's slices takes one a slice
    // (sweepSliceEndpoints), three slices and the one that finds the end.
    const count = 3;
    await db.endpoint.createMany({
      data: Array.from({ length: count }, (_, i) => ({
        orgId: org.id,
        slug: `e${i}`,
        name: `e${i}`,
        gpuType: "A10G",
      })),
    });
    const ids = (await db.endpoint.findMany({ select: { id: true }, orderBy: { id: "asc" } })).map(
      (e) => e.id,
    );

    // Two schedulers tick together: one slice is queued, not two.
    const both = await Promise.all([take("a"), take("b")]);
    expect(both.sort((x, y) => x - y)).toEqual([0, 1]);
    // While a slice's jobs wait, the walk does not move.
    await nextTick();
    expect(await take("a")).toBe(0);
    expect(await drainSweepJobs()).toEqual(ids.slice(0, 1));
    for (const k of [1, 2]) {
      await nextTick();
      expect(await take(k === 1 ? "b" : "a")).toBe(1);
      expect(await drainSweepJobs()).toEqual(ids.slice(k, k + 1));
    }
    // The slice after the last endpoint finds none and ends the round.
    await nextTick();
    expect(await take("b")).toBe(0);

    // The round ended: the next is not due until its period is out.
    await nextTick();
    expect(await take("a")).toBe(0);
    expect(await drainSweepJobs()).toEqual([]);

    // An unreadable record starts a round again (at worst a repeat), as a wiped one does.
    await redis.producer.set(`${prefix}:sweep-walk`, "{not json");
    await nextTick();
    expect(await take("b")).toBe(1);
    expect(await drainSweepJobs()).toEqual(ids.slice(0, 1));
  });

  it("takes full slices of a fleet larger than a period's worth", async () => {
    const db = testDb.current.db;
    const org = await db.org.create({ data: { slug: "walk-large", name: "Walk large" } });
    await db.endpoint.createMany({
      data: Array.from({ length: SWEEP_SLICE_ENDPOINTS * SWEEP_SLICES_PER_TICK + 1 }, (_, i) => ({
        orgId: org.id,
        slug: `l${i}`,
        name: `l${i}`,
        gpuType: "A10G",
      })),
    });
    await redis.producer.del(`${prefix}:sweep-walk`);
    await nextTick();
    expect(await take("a")).toBe(SWEEP_SLICE_ENDPOINTS);
    expect(await drainSweepJobs()).toHaveLength(SWEEP_SLICE_ENDPOINTS);
  });
});
