import { createDbClient } from "@thaw/db";
import { useTestDatabase } from "@thaw/db/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueue } from "../queues.ts";
import { startScheduler, type RunningScheduler } from "../scheduler.ts";
import {
  type SchedulerTestStack,
  schedulerTestEnv,
  startSchedulerTestStack,
  TEST_SNAPSHOT_STORE,
} from "../testing/scheduler-test-stack.ts";
import { processSnapshot } from "./snapshot-processor.ts";
import { createWorkerContext } from "./worker-context.ts";
import { TEST_AGENT_CALL_KEY } from "../testing/agent-call-keys.ts";

// The snapshot worker end to end: Postgres, Redis and a real sim agent. Llama 3.2 3B on a
// g5.xlarge (gp3 disk): a sleep-level-2 restore (~77 s by the physics model) is far faster than
// pulling its 9 GB image (~325 s) or even starting from the cached image (~215 s), so the
// first successful start is followed by a capture, and the replacement restores.

const HOSTS = 2;
const silent = pino({ level: "silent" });

interface RecordedOption {
  nodeId: string;
  path: string;
  locality: string;
  snapshotId?: string;
  chosen: boolean;
  costSeconds: number;
}

describe("snapshot worker with a real sim agent", () => {
  const testDb = useTestDatabase();
  const prefix = `test-snapshot-${Date.now()}`;
  let stack: SchedulerTestStack;
  let scheduler: RunningScheduler;
  let endpointId: string;
  let deploymentId: string;

  const db = () => testDb.current.db;
  const env = () => schedulerTestEnv({ databaseUrl: testDb.current.url, prefix });

  beforeAll(async () => {
    stack = await startSchedulerTestStack({
      db: db(),
      prefix,
      hosts: HOSTS,
      agentPrefix: "sn",
      agentEnv: { THAW_SIM_TIME_FACTOR: "2000", THAW_SIM_ESTARGZ: "false" },
    });
    const endpoint = await db().endpoint.findFirstOrThrow({
      where: { orgId: stack.orgId, slug: "llama-3-2-3b-instruct" },
    });
    endpointId = endpoint.id;
    deploymentId = endpoint.activeDeploymentId!;
    scheduler = await startScheduler(env(), silent, { sweepMs: 1_000 });
  }, 120_000);

  afterAll(async () => {
    await scheduler?.stop();
    await stack?.close();
  });

  it("captures after the first successful start; the replacement on that node restores", async () => {
    await db().endpoint.update({ where: { id: endpointId }, data: { desiredReplicas: 1 } });
    await enqueue(stack.queues, "reconcile", { endpointId });

    await expect
      .poll(() => db().snapshot.count({ where: { deploymentId, status: "ready" } }), {
        timeout: 60_000,
      })
      .toBe(1);
    const snapshot = await db().snapshot.findFirstOrThrow({
      where: { deploymentId },
      include: { nodeCopies: true },
    });
    expect(snapshot).toMatchObject({
      status: "ready",
      location: "store",
      gpuModel: "A10G",
      bytes: 3_400_000_000n,
      sleepLevel: 2,
    });
    // In the operator's store, with the digest the agent reported: what restores fetch by.
    expect(snapshot.uri).toBe(
      `${TEST_SNAPSHOT_STORE}:${stack.orgId}.${deploymentId}.${snapshot.id}`,
    );
    expect(snapshot.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(snapshot.nodeCopies.map((c) => c.nodeId)).toEqual([snapshot.sourceNodeId]);
    // The first start was the one before the capture, and the captured replica is stopped.
    const first = await db().coldStart.findFirstOrThrow({
      where: { replicaId: snapshot.sourceReplicaId!, status: "succeeded" },
    });
    expect(first.path).not.toBe("restore");
    expect(first.nodeId).toBe(snapshot.sourceNodeId);
    await expect
      .poll(async () => (await db().replica.findUnique({ where: { id: first.replicaId } }))?.state)
      .toBe("stopped");

    // Reconcile replaces the captured replica; restore from the node's own copy is fastest.
    await expect
      .poll(
        () =>
          db().coldStart.findFirst({
            where: { endpointId, replicaId: { not: first.replicaId }, status: "succeeded" },
          }),
        { timeout: 45_000 },
      )
      .not.toBeNull();
    const replacement = (await db().coldStart.findFirst({
      where: { endpointId, replicaId: { not: first.replicaId }, status: "succeeded" },
    }))!;
    const options = (replacement.options as unknown as { feasible: RecordedOption[] }).feasible;
    const restores = options.filter((o) => o.path === "restore");
    expect(restores).toContainEqual(
      expect.objectContaining({
        nodeId: snapshot.sourceNodeId,
        locality: "snapshot-local",
        snapshotId: snapshot.id,
      }),
    );
    const fastest = options.reduce((a, b) => (b.costSeconds < a.costSeconds ? b : a));
    expect(fastest).toMatchObject({ path: "restore", nodeId: snapshot.sourceNodeId, chosen: true });
    expect([replacement.path, replacement.locality, replacement.nodeId]).toEqual([
      "restore",
      "snapshot-local",
      snapshot.sourceNodeId,
    ]);
    await expect
      .poll(() => db().replica.count({ where: { endpointId, state: "ready" } }), {
        timeout: 30_000,
      })
      .toBe(1);
  });

  it("running the worker again, twice at once, makes no second snapshot", async () => {
    const db2 = createDbClient({ url: testDb.current.url, maxConnections: 4 });
    try {
      const ctx = createWorkerContext({
        db: db2,
        queues: stack.queues,
        log: silent,
        agentCallKey: TEST_AGENT_CALL_KEY,
        snapshotStore: TEST_SNAPSHOT_STORE,
      });
      const results = await Promise.all([
        processSnapshot(ctx, { deploymentId }),
        processSnapshot(ctx, { deploymentId }),
      ]);
      for (const result of results)
        expect(result).toEqual({
          kind: "skip",
          reason:
            "a ready or capturing snapshot already exists for every GPU/driver/CUDA it runs on",
        });
      expect(await db().snapshot.count({ where: { deploymentId } })).toBe(1);
      expect(await db().nodeSnapshot.count()).toBe(1);
    } finally {
      await db2.$disconnect();
    }
  });
});
