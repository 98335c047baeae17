import { emptyIdleTimeHistogram } from "@thaw/core";
import { useTestDatabase } from "@thaw/db/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueue } from "../queues.ts";
import { startScheduler, type RunningScheduler } from "../scheduler.ts";
import {
  type SchedulerTestStack,
  schedulerTestEnv,
  startSchedulerTestStack,
} from "../testing/scheduler-test-stack.ts";

// The warm pool end to end: Postgres, Redis and a real sim agent. A scaled-down replica is
// parked (not stopped), the next scale-up is a warm handover, and once the keep-alive has run
// out the parked replica is stopped and its GPU freed.

const HOSTS = 2;
/** Short enough for the test to wait it out, long enough for a scale-up to land inside it. */
const KEEP_ALIVE_SECONDS = 20;
const silent = pino({ level: "silent" });

describe("warm pool with a real sim agent", () => {
  const testDb = useTestDatabase();
  const prefix = `test-warm-pool-${Date.now()}`;
  let stack: SchedulerTestStack;
  let scheduler: RunningScheduler;
  let endpointId: string;

  const db = () => testDb.current.db;
  const scaleTo = async (desired: number) => {
    await db().endpoint.update({ where: { id: endpointId }, data: { desiredReplicas: desired } });
    await enqueue(stack.queues, "reconcile", { endpointId });
  };
  const stateOf = async (id: string) =>
    (await db().replica.findUniqueOrThrow({ where: { id } })).state;
  const readyReplica = () => db().replica.findFirst({ where: { endpointId, state: "ready" } });

  beforeAll(async () => {
    stack = await startSchedulerTestStack({
      db: db(),
      prefix,
      hosts: HOSTS,
      agentPrefix: "wp",
      agentEnv: { THAW_SIM_TIME_FACTOR: "2000" },
    });
    endpointId = stack.endpointId;
    const env = schedulerTestEnv({
      databaseUrl: testDb.current.url,
      prefix,
      extra: {
        THAW_WARM_POOL_GPU_BUDGET: "2",
        // The hybrid windows: the keep-alive and pre-warm point are what these tests set.
        THAW_WARM_POOL_WINDOWS: "hybrid-histogram",
        THAW_WARM_POOL_KEEP_ALIVE_SECONDS: String(KEEP_ALIVE_SECONDS),
        // Every miss counts in full: the keep-alive is exactly the setting above.
        THAW_WARM_POOL_FULL_VALUE_MISS_SECONDS: "0.001",
      },
    });
    scheduler = await startScheduler(env, silent, { sweepMs: 1_000 });
  }, 120_000);

  afterAll(async () => {
    await scheduler?.stop();
    await stack?.close();
  });

  it("parks a scaled-down replica as warm instead of stopping it; it keeps its GPU", async () => {
    await scaleTo(1);
    await expect.poll(readyReplica, { timeout: 45_000 }).not.toBeNull();
    const first = (await readyReplica())!;
    await scaleTo(0);
    await expect.poll(() => stateOf(first.id), { timeout: 15_000 }).toBe("warm");
    const reservations = await db().gpuReservation.findMany({ where: { replicaId: first.id } });
    expect(reservations).toHaveLength(1);
    const memory = await db().endpointWarmPool.findUniqueOrThrow({ where: { endpointId } });
    expect(memory.idleSince).not.toBeNull();
  });

  it("hands the parked replica over on the next scale-up: path warm, far faster than the cold start", async () => {
    const parked = await db().replica.findFirstOrThrow({ where: { endpointId, state: "warm" } });
    const [coldStart] = await db().coldStart.findMany({
      where: { endpointId, status: "succeeded" },
      orderBy: { requestedAt: "asc" },
    });
    await scaleTo(1);
    await expect.poll(readyReplica, { timeout: 30_000 }).not.toBeNull();
    const next = (await readyReplica())!;
    const handover = await db().coldStart.findFirstOrThrow({
      where: { replicaId: next.id, status: "succeeded" },
    });
    expect(handover.path).toBe("warm");
    expect(handover.nodeId).toBe(parked.nodeId);
    expect(coldStart!.path).not.toBe("warm");
    // Simulated (reported) seconds: resuming a parked replica skips pull, load and warm-up.
    expect(handover.actualSeconds!).toBeLessThan(coldStart!.actualSeconds! / 5);
    expect(await stateOf(parked.id)).toBe("stopped");
    const reservations = await db().gpuReservation.findMany();
    expect(reservations.map((r) => r.replicaId)).toEqual([next.id]);
    // The gap between scale-down and scale-up is one idle time in the histogram.
    const memory = await db().endpointWarmPool.findUniqueOrThrow({ where: { endpointId } });
    const { bins } = memory.histogram as { bins: number[] };
    expect(bins.reduce((a, b) => a + b, 0)).toBe(1);
    expect(memory.idleSince).toBeNull();
  });

  it("stops the parked replica and frees its GPU once the keep-alive has passed", async () => {
    const serving = (await readyReplica())!;
    await scaleTo(0);
    await expect.poll(() => stateOf(serving.id), { timeout: 15_000 }).toBe("warm");
    // No assertion on when: the sweep finds the keep-alive over and releases it.
    await expect
      .poll(() => stateOf(serving.id), { timeout: (KEEP_ALIVE_SECONDS + 40) * 1000 })
      .toBe("stopped");
    expect(await db().gpuReservation.count()).toBe(0);
    expect(
      await db().replica.count({ where: { endpointId, state: { notIn: ["stopped", "failed"] } } }),
    ).toBe(0);
  }, 90_000);

  it("pre-warms a replica when the idle-time histogram says the next scale-up is due, and hands it over", async () => {
    // An endpoint that has always been idle for about ten minutes between bursts, idle for
    // nine now: the hybrid policy's pre-warm point (p5 of idle times, less a 10% margin) is
    // 540 s, and the re-warm starts one predicted start before it.
    const bins = emptyIdleTimeHistogram().bins;
    bins[10] = 20;
    await db().$transaction(async (tx) => {
      // Under the endpoint's row lock, as the warm-pool worker writes it: no tending in between.
      await tx.$queryRaw`SELECT id FROM "Endpoint" WHERE id = ${endpointId}::uuid FOR NO KEY UPDATE`;
      await tx.endpointWarmPool.update({
        where: { endpointId },
        data: {
          histogram: { bins, outOfBounds: 0 },
          idleSince: new Date(Date.now() - 530_000),
        },
      });
    });
    // The sweep tends the pool: a pre-warmed replica starts and is parked, nothing asked for it.
    const prewarmed = () =>
      db().replica.findFirst({ where: { endpointId, prewarm: true, state: "warm" } });
    await expect.poll(prewarmed, { timeout: 45_000 }).not.toBeNull();
    const parked = (await prewarmed())!;
    const [start] = await db().coldStart.findMany({ where: { replicaId: parked.id } });
    expect([start!.trigger, start!.status]).toEqual(["prewarm", "succeeded"]);
    expect(await db().endpoint.findUniqueOrThrow({ where: { id: endpointId } })).toMatchObject({
      desiredReplicas: 0,
    });
    expect(await db().gpuReservation.count({ where: { replicaId: parked.id } })).toBe(1);

    // The scale-up the histogram predicted gets it by handover.
    await scaleTo(1);
    await expect.poll(readyReplica, { timeout: 30_000 }).not.toBeNull();
    const serving = (await readyReplica())!;
    const handover = await db().coldStart.findFirstOrThrow({
      where: { replicaId: serving.id, status: "succeeded" },
    });
    expect([handover.path, handover.nodeId]).toEqual(["warm", parked.nodeId]);
    expect(await stateOf(parked.id)).toBe("stopped");
  }, 90_000);
});
