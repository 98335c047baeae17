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

// The kernel-cache store end to end: Postgres, Redis, the scheduler (with a store configured)
// and a real sim agent with two hosts of one GPU model and driver. The first replica compiles
// cold and is told to capture its caches; the agent reports the pushed digest as telemetry;
// the scale-up onto the other host is placed with the stored cache, fetches it before its
// engine compiles, and compiles warm.

const silent = pino({ level: process.env.THAW_TEST_LOG ?? "silent" });

describe("a deployment's kernel caches kept in the store, with a real sim agent", () => {
  const testDb = useTestDatabase();
  const prefix = `test-kc-${Date.now()}`;
  let stack: SchedulerTestStack;
  let scheduler: RunningScheduler;
  let endpointId: string;

  const db = () => testDb.current.db;
  const scaleTo = async (desired: number) => {
    await db().endpoint.update({ where: { id: endpointId }, data: { desiredReplicas: desired } });
    await enqueue(stack.queues, "reconcile", { endpointId });
  };
  const ready = () =>
    db().replica.findMany({ where: { endpointId, state: "ready" }, orderBy: { createdAt: "asc" } });
  const phasesOf = async (replicaId: string) => {
    const start = await db().coldStart.findFirstOrThrow({
      where: { replicaId, status: "succeeded" },
      include: { phases: { orderBy: { sequence: "asc" } } },
    });
    return { start, phases: start.phases };
  };

  beforeAll(async () => {
    stack = await startSchedulerTestStack({
      db: db(),
      prefix,
      hosts: 2,
      agentPrefix: "kc",
      agentEnv: { THAW_SIM_TIME_FACTOR: "2000" },
    });
    endpointId = (
      await db().endpoint.findFirstOrThrow({
        where: { orgId: stack.orgId, slug: "llama-3-2-3b-instruct" },
      })
    ).id;
    // Pull only, one replica per host (g5.xlarge, one GPU): the second lands on the other host.
    await db().endpoint.update({
      where: { id: endpointId },
      data: { allowedPaths: ["pull"], maxReplicas: 2 },
    });
    const env = schedulerTestEnv({ databaseUrl: testDb.current.url, prefix });
    scheduler = await startScheduler(env, silent, { sweepMs: 1_000 });
  }, 120_000);

  afterAll(async () => {
    if (process.env.THAW_TEST_LOG) console.log(stack.agent.output());
    await scheduler?.stop();
    await stack?.close();
  });

  it("captures the first start's caches, and the next start fetches them and compiles warm", async () => {
    await scaleTo(1);
    await expect.poll(async () => (await ready()).length, { timeout: 45_000 }).toBe(1);
    const [first] = await ready();
    const cold = await phasesOf(first!.id);
    expect(cold.phases.map((p) => p.phase)).not.toContain("fetch_kernel_cache");

    // The agent captures once the replica is ready and reports the digest as telemetry.
    await expect
      .poll(async () => (await db().kernelCache.findMany({ where: { status: "ready" } })).length, {
        timeout: 45_000,
      })
      .toBe(1);
    const cache = await db().kernelCache.findFirstOrThrow({ where: { status: "ready" } });
    const node = await db().node.findUniqueOrThrow({ where: { id: first!.nodeId! } });
    expect(cache).toMatchObject({
      deploymentId: first!.deploymentId,
      gpuModel: node.gpuModel,
      driverVersion: node.driverVersion,
      coldStartId: cold.start.id,
      sourceNodeId: node.id,
    });
    expect(cache.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(cache.bytes).toBeGreaterThan(0n);

    await scaleTo(2);
    await expect.poll(async () => (await ready()).length, { timeout: 45_000 }).toBe(2);
    const second = (await ready()).find((r) => r.id !== first!.id)!;
    expect(second.nodeId).not.toBe(first!.nodeId);
    const warm = await phasesOf(second.id);
    const chosen = (
      warm.start.options as { feasible: { chosen: boolean; kernelCacheId?: string }[] }
    ).feasible.find((o) => o.chosen);
    expect(chosen?.kernelCacheId).toBe(cache.id);
    const names = warm.phases.map((p) => p.phase);
    expect(names.indexOf("fetch_kernel_cache")).toBe(names.indexOf("compile") - 1);
    const fetch = warm.phases.find((p) => p.phase === "fetch_kernel_cache")!;
    expect(fetch.bytes).toBe(cache.bytes);
    // Warm: a tenth of the cold compile (the model's residual), noise aside.
    const compileOf = (phases: typeof cold.phases) =>
      phases.find((p) => p.phase === "compile")!.seconds!;
    expect(compileOf(warm.phases)).toBeLessThan(compileOf(cold.phases) / 3);
  });
});
