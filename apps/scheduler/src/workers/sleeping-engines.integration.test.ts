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

// Sleeping engines end to end: Postgres, Redis, the scheduler and a real sim agent. A vLLM
// replica the warm pool lets go at the end of its keep-alive sleeps on its host (its GPU given
// back, its weights in the host's memory), and the next scale-up wakes it there.

const KEEP_ALIVE_SECONDS = 5;
const silent = pino({ level: process.env.THAW_TEST_LOG ?? "silent" });

describe("sleeping engines with a real sim agent", () => {
  const testDb = useTestDatabase();
  const prefix = `test-sleeping-${Date.now()}`;
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
      hosts: 1,
      agentPrefix: "sl",
      agentEnv: { THAW_SIM_TIME_FACTOR: "2000" },
    });
    // Llama 3.2 3B on vLLM (an engine with a sleep API) on the one g5.xlarge host. Without
    // the restore path: a snapshot capture would take the serving replica before it is parked.
    endpointId = (
      await db().endpoint.findFirstOrThrow({
        where: { orgId: stack.orgId, slug: "llama-3-2-3b-instruct" },
      })
    ).id;
    await db().endpoint.update({
      where: { id: endpointId },
      data: { allowedPaths: ["warm", "wake", "lazy", "pull"] },
    });
    const env = schedulerTestEnv({
      databaseUrl: testDb.current.url,
      prefix,
      extra: {
        THAW_WARM_POOL_GPU_BUDGET: "1",
        THAW_WARM_POOL_WINDOWS: "hybrid-histogram",
        THAW_WARM_POOL_KEEP_ALIVE_SECONDS: String(KEEP_ALIVE_SECONDS),
        THAW_WARM_POOL_FULL_VALUE_MISS_SECONDS: "0.001",
      },
    });
    scheduler = await startScheduler(env, silent, { sweepMs: 1_000 });
  }, 120_000);

  afterAll(async () => {
    if (process.env.THAW_TEST_LOG) console.log(stack.agent.output());
    await scheduler?.stop();
    await stack?.close();
  });

  it("parks, then puts to sleep: no GPU held, the GPU it slept on kept", async () => {
    await scaleTo(1);
    await expect.poll(readyReplica, { timeout: 45_000 }).not.toBeNull();
    const first = (await readyReplica())!;
    await scaleTo(0);
    await expect
      .poll(() => stateOf(first.id), { timeout: (KEEP_ALIVE_SECONDS + 40) * 1000 })
      .toBe("sleeping");
    const asleep = await db().replica.findUniqueOrThrow({ where: { id: first.id } });
    // g5.xlarge: 16 GiB. Less the reserve and a serving engine's process, the 6.4 GB of
    // weights fit beside it: level 1.
    expect(asleep).toMatchObject({ sleepLevel: 1, sleepingGpus: [0] });
    expect(await db().gpuReservation.count()).toBe(0);
  }, 90_000);

  it("wakes it on the next scale-up, on its host and its GPU", async () => {
    const asleep = await db().replica.findFirstOrThrow({
      where: { endpointId, state: "sleeping" },
    });
    await scaleTo(1);
    await expect.poll(readyReplica, { timeout: 45_000 }).not.toBeNull();
    const woken = (await readyReplica())!;
    const start = await db().coldStart.findFirstOrThrow({
      where: { replicaId: woken.id, status: "succeeded" },
    });
    expect([start.path, start.nodeId]).toEqual(["wake", asleep.nodeId]);
    const phases = await db().phaseEvent.findMany({
      where: { coldStartId: start.id },
      orderBy: { sequence: "asc" },
    });
    expect(phases.map((p) => p.phase)).toEqual(["load_weights", "warmup", "ready"]);
    expect(await stateOf(asleep.id)).toBe("stopped");
    const reservations = await db().gpuReservation.findMany();
    expect(reservations.map((r) => [r.replicaId, r.gpuIndex])).toEqual([[woken.id, 0]]);
  }, 90_000);
});
