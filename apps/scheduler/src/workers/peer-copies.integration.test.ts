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

// The peer path end to end: Postgres, Redis, the scheduler and a real sim agent with two hosts.
// The first replica of a deployment has nothing to copy from and pulls; the scale-up to two
// copies the weights and kernel caches from it onto the other host, and the agent's phases —
// the copy and the cache fetch apart — land in Postgres.

const silent = pino({ level: process.env.THAW_TEST_LOG ?? "silent" });

describe("a scale-up that copies from a serving replica, with a real sim agent", () => {
  const testDb = useTestDatabase();
  const prefix = `test-peer-${Date.now()}`;
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

  beforeAll(async () => {
    stack = await startSchedulerTestStack({
      db: db(),
      prefix,
      hosts: 2,
      agentPrefix: "pe",
      agentEnv: { THAW_SIM_TIME_FACTOR: "2000" },
    });
    endpointId = (
      await db().endpoint.findFirstOrThrow({
        where: { orgId: stack.orgId, slug: "llama-3-2-3b-instruct" },
      })
    ).id;
    // One replica per host: the second cannot land beside the first (g5.xlarge, one GPU).
    await db().endpoint.update({
      where: { id: endpointId },
      data: { allowedPaths: ["peer", "pull"], maxReplicas: 2 },
    });
    const env = schedulerTestEnv({ databaseUrl: testDb.current.url, prefix });
    scheduler = await startScheduler(env, silent, { sweepMs: 1_000 });
  }, 120_000);

  afterAll(async () => {
    if (process.env.THAW_TEST_LOG) console.log(stack.agent.output());
    await scheduler?.stop();
    await stack?.close();
  });

  it("pulls the first replica (no source yet), copies the second from it", async () => {
    await scaleTo(1);
    await expect.poll(async () => (await ready()).length, { timeout: 45_000 }).toBe(1);
    const [first] = await ready();
    const firstStart = await db().coldStart.findFirstOrThrow({
      where: { replicaId: first!.id, status: "succeeded" },
    });
    expect(firstStart.path).toBe("pull");
    const { infeasible } = firstStart.options as { infeasible: { path: string; reason: string }[] };
    expect(infeasible).toContainEqual(
      expect.objectContaining({
        path: "peer",
        reason: "no serving replica of this deployment to copy from",
      }),
    );

    await scaleTo(2);
    await expect.poll(async () => (await ready()).length, { timeout: 45_000 }).toBe(2);
    const second = (await ready()).find((r) => r.id !== first!.id)!;
    const start = await db().coldStart.findFirstOrThrow({
      where: { replicaId: second.id, status: "succeeded" },
    });
    expect(start.path).toBe("peer");
    expect(start.nodeId).not.toBe(first!.nodeId);
    const phases = await db().phaseEvent.findMany({
      where: { coldStartId: start.id },
      orderBy: { sequence: "asc" },
    });
    const names = phases.map((p) => p.phase);
    expect(names).toContain("peer_transfer");
    expect(names).toContain("fetch_kernel_cache");
    expect(names).not.toContain("load_weights");
    const copy = phases.find((p) => p.phase === "peer_transfer")!;
    const { modelBytes } = await db().deployment.findUniqueOrThrow({
      where: { id: start.deploymentId },
    });
    expect(Number(copy.bytes)).toBe(Number(modelBytes));
  }, 120_000);
});
