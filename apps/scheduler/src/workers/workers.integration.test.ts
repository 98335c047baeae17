import { useTestDatabase } from "@thaw/db/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDeployment, placeReplica, replicaReasonText } from "@thaw/core";
import { AgentApiError } from "@thaw/node-agent-client";
import { enqueue, type SchedulerQueues } from "../queues.ts";
import type { createProducerConnection } from "../redis.ts";
import { startScheduler, type RunningScheduler } from "../scheduler.ts";
import {
  type SchedulerTestStack,
  schedulerTestEnv,
  startSchedulerTestStack,
} from "../testing/scheduler-test-stack.ts";
import { processDispatch } from "./dispatch-processor.ts";
import { createWorkerContext } from "./worker-context.ts";
import { TEST_AGENT_CALL_KEY } from "../testing/agent-call-keys.ts";

// The scheduler's workers end to end: Postgres, Redis (BullMQ) and a real sim agent process
// that joins, heartbeats, runs the starts it is sent and streams their phases back.

const HOSTS = 3; // g5.xlarge: one A10G each
const silent = pino({ level: "silent" });

describe("scheduler workers with a real sim agent", () => {
  const testDb = useTestDatabase();
  const prefix = `test-workers-${Date.now()}`;
  let stack: SchedulerTestStack;
  let scheduler: RunningScheduler;
  let producer: ReturnType<typeof createProducerConnection>;
  let queues: SchedulerQueues;
  let endpointId: string;

  const db = () => testDb.current.db;
  const env = () => schedulerTestEnv({ databaseUrl: testDb.current.url, prefix });
  const replicas = (state: string) =>
    db().replica.count({ where: { endpointId, state: state as "ready" } });
  const scaleTo = async (desired: number) => {
    await db().endpoint.update({ where: { id: endpointId }, data: { desiredReplicas: desired } });
    await enqueue(queues, "reconcile", { endpointId });
  };

  beforeAll(async () => {
    stack = await startSchedulerTestStack({
      db: db(),
      prefix,
      hosts: HOSTS,
      agentPrefix: "wk",
      // Hosts without stargz-snapshotter: lazy starts are refused (the fallback test).
      agentEnv: { THAW_SIM_TIME_FACTOR: "2000", THAW_SIM_ESTARGZ: "false" },
    });
    ({ endpointId, producer, queues } = stack);
    scheduler = await startScheduler(env(), silent, { sweepMs: 1_000 });
  }, 120_000);

  afterAll(async () => {
    await scheduler?.stop();
    await stack?.close();
  });

  it("scales up: places, starts on the agent, reaches ready, and learns from it", async () => {
    await scaleTo(2);
    await expect.poll(() => replicas("ready"), { timeout: 45_000 }).toBe(2);
    const starts = await db().coldStart.findMany({ where: { endpointId, status: "succeeded" } });
    expect(starts).toHaveLength(2);
    for (const start of starts) {
      expect(start.actualSeconds).toBeGreaterThan(0);
      expect(start.explanation).not.toBe("");
      const options = start.options as { feasible: { chosen: boolean; path: string }[] };
      expect(options.feasible.filter((o) => o.chosen)).toEqual([
        expect.objectContaining({ path: start.path }),
      ]);
      const phases = await db().phaseEvent.findMany({ where: { coldStartId: start.id } });
      expect(phases.map((p) => p.phase)).toContain("ready");
    }
    // Each success feeds three history cells: deployment, endpoint and fleet bucket.
    await expect
      .poll(() =>
        db().coldStart.count({
          // The successes: a failed attempt is handled too, and feeds no history cell.
          where: { endpointId, status: "succeeded", closedHandledAt: { not: null } },
        }),
      )
      .toBeGreaterThanOrEqual(2);
    const cells = await db().historyStat.findMany();
    expect(new Set(cells.map((c) => c.scope))).toEqual(
      new Set(["deployment", "endpoint", "fleet"]),
    );
    expect(cells.find((c) => c.scope === "deployment")!.samples).toBeGreaterThanOrEqual(1);
    expect(await db().gpuReservation.count()).toBe(2);
  });

  it("never books a GPU twice: more replicas than GPUs leaves the rest pending with a reason", async () => {
    // A second scheduler process races the first on the same queues and database.
    const second = await startScheduler(env(), silent, { sweepMs: 1_000 });
    try {
      await scaleTo(HOSTS + 2);
      await expect.poll(() => replicas("ready"), { timeout: 45_000 }).toBe(HOSTS);
      await expect.poll(() => replicas("pending")).toBe(2);
      const pending = await db().replica.findMany({ where: { endpointId, state: "pending" } });
      for (const replica of pending) {
        expect(replica.pendingCause).toBe("waiting_for_capacity");
        expect(replicaReasonText(replica)).toMatch(/GPU|no feasible/);
      }
      const reservations = await db().gpuReservation.findMany();
      expect(reservations).toHaveLength(HOSTS);
      expect(new Set(reservations.map((r) => `${r.nodeId}:${r.gpuIndex}`)).size).toBe(HOSTS);
    } finally {
      await second.stop();
    }
  });

  it("scales down: drains, stops the replicas on their node and frees every GPU", async () => {
    await scaleTo(0);
    await expect
      .poll(() => db().replica.count({ where: { endpointId, state: { not: "stopped" } } }), {
        timeout: 30_000,
      })
      .toBe(0);
    expect(await db().gpuReservation.count()).toBe(0);
  });

  it("recovers the desired state from Postgres after Redis lost every job", async () => {
    await scheduler.stop();
    const keys = await producer.keys(`${prefix}:*`);
    if (keys.length > 0) await producer.del(...keys);
    // The change lands in Postgres only, as if its enqueue had been lost with Redis.
    await db().endpoint.update({ where: { id: endpointId }, data: { desiredReplicas: 1 } });
    scheduler = await startScheduler(env(), silent, { sweepMs: 1_000 });
    await expect.poll(() => replicas("ready"), { timeout: 45_000 }).toBe(1);
  });

  it("falls back to the next-best option when the agent refuses the chosen path", async () => {
    await scaleTo(0);
    await expect.poll(() => replicas("ready"), { timeout: 30_000 }).toBe(0);
    const deployment = await db().deployment.findFirstOrThrow({ where: { endpointId } });
    // History that makes lazy look far faster than pull on a cold node: the chooser takes
    // it, and these hosts (no stargz-snapshotter) refuse it.
    await db().historyStat.create({
      data: {
        orgId: deployment.orgId,
        scope: "deployment",
        scopeKey: deployment.id,
        path: "lazy",
        locality: "cold",
        samples: 50,
        meanLog: Math.log(0.5),
        m2Log: 0.01 * 49,
      },
    });
    await db().endpoint.update({
      where: { id: endpointId },
      data: { allowedPaths: ["lazy", "pull"] },
    });
    const before = new Date();
    await scaleTo(1);
    await expect.poll(() => replicas("ready"), { timeout: 45_000 }).toBe(1);
    const [ready] = await db().replica.findMany({ where: { endpointId, state: "ready" } });
    const starts = await db().coldStart.findMany({
      where: { replicaId: ready!.id, requestedAt: { gte: before } },
      orderBy: { attempt: "asc" },
    });
    // Lazy is tried on each host that looks best (each refuses it), then pull succeeds.
    const last = starts.at(-1)!;
    expect([last.path, last.status]).toEqual(["pull", "succeeded"]);
    const refused = starts.slice(0, -1);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const start of refused) {
      expect([start.path, start.status]).toEqual(["lazy", "failed"]);
      expect(start.error).toMatch(/not started/);
    }
    expect(new Set(refused.map((s) => s.nodeId)).size).toBe(refused.length);
    expect(starts.map((s) => s.attempt)).toEqual(starts.map((_, i) => i + 1));
  });

  it("sends a dispatch batch's starts at once and retries only the one whose agent is out of reach", async () => {
    await scaleTo(0);
    await expect.poll(() => replicas("ready"), { timeout: 30_000 }).toBe(0);
    await expect.poll(() => db().gpuReservation.count(), { timeout: 30_000 }).toBe(0);
    // The jobs are run by hand here, one attempt at a time.
    await scheduler.stop();
    const deployment = await db().deployment.findFirstOrThrow({ where: { endpointId } });
    // Pull only: these hosts refuse lazy starts (the test before this one).
    await db().endpoint.update({
      where: { id: endpointId },
      data: { desiredReplicas: 2, allowedPaths: ["pull"] },
    });
    const [first] = await db().replica.createManyAndReturn({
      data: [0, 1].map((i) => ({
        orgId: deployment.orgId,
        endpointId,
        deploymentId: deployment.id,
        state: "pending" as const,
        createdAt: new Date(Date.now() - 1_000 + i),
      })),
    });
    const ctx = createWorkerContext({
      db: db(),
      queues,
      log: silent,
      agentCallKey: TEST_AGENT_CALL_KEY,
    });
    // Placed only (a place job would send them at once): the dispatch attempts are run below.
    const starts = (await placeReplica({ db: db(), replicaId: first!.id })).placed;
    expect(starts).toHaveLength(2);
    const coldStartIds = starts.map((s) => s.coldStartId);
    const [reachable, outOfReach] = await Promise.all(
      coldStartIds.map((id) => db().coldStart.findUniqueOrThrow({ where: { id } })),
    );
    const node = await db().node.findUniqueOrThrow({ where: { id: outOfReach!.nodeId! } });
    // Nothing listens on port 9 (discard): connection refused, a retryable error.
    await db().node.update({
      where: { id: node.id },
      data: { agentUrl: "https://127.0.0.1:9" },
    });
    try {
      const status = async (id: string) =>
        (await db().coldStart.findUniqueOrThrow({ where: { id } })).status;

      // An attempt with attempts left: the reachable start goes out, the job is retried.
      const attempt = (attemptsMade: number) =>
        processDispatch(ctx, { coldStartIds }, { attemptsMade, opts: { attempts: 5 } });
      await expect(attempt(0)).rejects.toBeInstanceOf(AgentApiError);
      // Sent (the sim host may already have finished it).
      expect(["dispatched", "running", "succeeded"]).toContain(await status(reachable!.id));
      expect(await status(outOfReach!.id)).toBe("scheduled");

      // The last attempt: the sent start is skipped, the unreachable one closed and re-placed.
      expect(await attempt(4)).toEqual({ dispatched: 0, skipped: 1, failed: 1 });
      expect(["dispatched", "running", "succeeded"]).toContain(await status(reachable!.id));
      const closed = await db().coldStart.findUniqueOrThrow({ where: { id: outOfReach!.id } });
      expect(closed.status).toBe("failed");
      // Classified for the tenant: the far end's text stays in the operator's log.
      expect(closed.error).toMatch(/^not started: agent_unreachable: /);
      const replaced = await db().replica.findUniqueOrThrow({ where: { id: closed.replicaId } });
      expect(replaced.state).toBe("pending");
      const placeJobs = await queues.place.getJobs(["waiting", "prioritized", "delayed"]);
      expect(placeJobs.map((j) => (j.data as { replicaId: string }).replicaId)).toContain(
        closed.replicaId,
      );
    } finally {
      await db().node.update({ where: { id: node.id }, data: { agentUrl: node.agentUrl } });
      scheduler = await startScheduler(env(), silent, { sweepMs: 1_000 });
    }
    await expect.poll(() => replicas("ready"), { timeout: 45_000 }).toBe(2);
  });

  it("rolls a new version without downtime: old replicas serve until new ones are ready", async () => {
    await expect.poll(() => replicas("ready"), { timeout: 45_000 }).toBe(2);
    const old = await db().deployment.findFirstOrThrow({
      where: { endpointId, status: "active" },
    });
    // Two replicas serve on three one-GPU hosts: room for one new replica, the second must
    // wait for an old one to give up its GPU.
    const { result: next } = await createDeployment({
      actor: { type: "system", orgId: old.orgId },
      endpoint: endpointId,
      input: {
        imageRef: old.imageRef,
        imageBytes: Number(old.imageBytes),
        modelSource: old.modelSource,
        modelBytes: Number(old.modelBytes),
        modelFormat: old.modelFormat,
        engine: old.engine,
      },
      db: db(),
    });
    await enqueue(queues, "reconcile", { endpointId });
    const serving = async () => {
      const ready = await db().replica.findMany({
        where: { endpointId, state: "ready" },
        select: { deploymentId: true },
      });
      return {
        old: ready.filter((r) => r.deploymentId === old.id).length,
        next: ready.filter((r) => r.deploymentId === next.id).length,
      };
    };
    let fewest = Number.POSITIVE_INFINITY;
    let now = await serving();
    const deadline = Date.now() + 60_000;
    while (!(now.next === 2 && now.old === 0) && Date.now() < deadline) {
      fewest = Math.min(fewest, now.old + now.next);
      await new Promise((resolve) => setTimeout(resolve, 50));
      now = await serving();
    }
    expect(now).toEqual({ old: 0, next: 2 });
    // Never fewer than one serving: at most one replica short, while the fleet had no room.
    expect(fewest).toBeGreaterThanOrEqual(1);
  }, 90_000);
});
