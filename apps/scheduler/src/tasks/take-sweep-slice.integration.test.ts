import { SWEEP_SLICE_ENDPOINTS } from "@thaw/core";
import { useTestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueues, type SchedulerQueues } from "../queues.ts";
import { createProducerConnection } from "../redis.ts";
import { takeSweepSlice } from "./take-sweep-slice.ts";

// The sweep's walk is one for the whole control plane: schedulers ticking at once queue a
// slice once, the walk moves on across them, and it survives a wiped or unreadable record.

describe("takeSweepSlice", () => {
  const testDb = useTestDatabase();
  const prefix = `test-sweep-walk-${Date.now()}`;
  // A tick of 400 ms (its lock lives 360 ms); a round is due again 6 s after it began, far
  // beyond this test's own ticks even on a loaded machine.
  const sweepMs = 6_000;
  let producer: ReturnType<typeof createProducerConnection>;
  let queues: SchedulerQueues;

  beforeAll(async () => {
    producer = createProducerConnection(process.env.REDIS_URL!);
    await producer.connect();
    queues = createQueues(producer, prefix);
  });

  afterAll(async () => {
    await Promise.all(
      Object.values(queues).map((q) => q.obliterate({ force: true }).then(() => q.close())),
    );
    await producer.del(`${prefix}:sweep-walk`, `${prefix}:sweep-walk:tick`);
    producer.disconnect();
  });

  const take = (instanceId: string) =>
    takeSweepSlice({
      db: testDb.current.db,
      redis: producer,
      queues,
      prefix,
      instanceId,
      sweepMs,
    });
  const nextTick = () => new Promise((resolve) => setTimeout(resolve, 400));
  /** The sweep's jobs that wait, as their workers would take them: the test drains them. */
  const drainSweepJobs = async () => {
    const queued = await queues.reconcile.getPrioritized();
    const tended = await queues.warmPool.getPrioritized();
    await Promise.all([...queued, ...tended].map((job) => job.remove()));
    return queued.map((job) => (job.data as { endpointId: string }).endpointId).sort();
  };

  it("queues each endpoint once a round, whichever scheduler takes the tick", async () => {
    const db = testDb.current.db;
    const org = await db.org.create({ data: { slug: "walk", name: "Walk" } });
    const count = SWEEP_SLICE_ENDPOINTS + 5;
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
    expect(both.sort((x, y) => x - y)).toEqual([0, SWEEP_SLICE_ENDPOINTS]);
    // While a slice's jobs wait, the walk does not move.
    await nextTick();
    expect(await take("a")).toBe(0);
    expect(await drainSweepJobs()).toEqual(ids.slice(0, SWEEP_SLICE_ENDPOINTS));
    await nextTick();
    expect(await take("b")).toBe(5);
    expect(await drainSweepJobs()).toEqual(ids.slice(SWEEP_SLICE_ENDPOINTS));

    // The round ended: the next is not due until its period is out.
    await nextTick();
    expect(await take("a")).toBe(0);
    expect(await drainSweepJobs()).toEqual([]);

    // An unreadable record starts a round again (at worst a repeat), as a wiped one does.
    await producer.set(`${prefix}:sweep-walk`, "{not json");
    await nextTick();
    expect(await take("b")).toBe(SWEEP_SLICE_ENDPOINTS);
    expect(await drainSweepJobs()).toEqual(ids.slice(0, SWEEP_SLICE_ENDPOINTS));
  });
});
