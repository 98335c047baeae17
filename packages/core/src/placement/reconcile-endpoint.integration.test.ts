import { DEMO_ENDPOINTS, demoDeploymentColumns } from "@thaw/db/seed";
import { useTestDatabase } from "@thaw/db/testing";
import { describe, expect, it } from "vitest";
import { prismaRows } from "@thaw/db";
import { emptyIdleTracker, recordIdleTime } from "../scheduling/index.ts";
import { testNodeRow } from "../testing/index.ts";
import { loadWarmPoolMemory, saveWarmPoolMemory } from "../warm-pool/warm-pool-memory.ts";
import { CRASH_LOOP_FAILURES, UNDISPATCHED_AFTER_MS } from "./decide-reconcile.ts";
import { reconcileEndpoint } from "./reconcile-endpoint.ts";

// Reconcile straight against Postgres, each branch its statements take: the scale-up and
// the warm pool's note of it, the crash-loop backoff, a scale-down's drain order and the
// starts it cancels, a replica on a lost node, and a start whose dispatch was lost.

const t = useTestDatabase();

async function seed(slug: string, desired: number) {
  const db = t.current.db;
  const org = await db.org.create({ data: { slug, name: slug } });
  const node = await db.node.create({
    data: testNodeRow(org.id, { name: `${slug}-node`, gpuCount: 4 }),
  });
  const endpoint = await db.endpoint.create({
    data: { orgId: org.id, slug, name: slug, gpuType: "A10G", desiredReplicas: desired },
  });
  const model = DEMO_ENDPOINTS.find((e) => e.gpuType === "A10G")!.deployment;
  const deployment = await db.deployment.create({
    data: {
      orgId: org.id,
      endpointId: endpoint.id,
      version: 1,
      ...demoDeploymentColumns(model),
      status: "active",
    },
  });
  await db.endpoint.update({
    where: { id: endpoint.id },
    data: { activeDeploymentId: deployment.id },
  });
  const replica = (state: "pending" | "placed" | "starting" | "ready" | "failed", at: number) =>
    db.replica.create({
      data: {
        orgId: org.id,
        endpointId: endpoint.id,
        deploymentId: deployment.id,
        state,
        nodeId: state === "pending" ? null : node.id,
        createdAt: new Date(at),
      },
    });
  return { db, org, node, endpoint, deployment, replica };
}

/** A placed replica whose start's dispatch job was lost: still scheduled past the deadline. */
async function lostStart({ db, org, node, endpoint, deployment, replica }: Seeded) {
  const placed = await replica("placed", Date.now() - 60_000);
  return db.coldStart.create({
    data: {
      orgId: org.id,
      endpointId: endpoint.id,
      deploymentId: deployment.id,
      replicaId: placed.id,
      nodeId: node.id,
      path: "pull",
      locality: "cold",
      predictedSeconds: 60,
      status: "scheduled",
      requestedAt: new Date(Date.now() - UNDISPATCHED_AFTER_MS - 1_000),
    },
  });
}
type Seeded = Awaited<ReturnType<typeof seed>>;

describe("reconcileEndpoint", () => {
  it("creates the shortfall as pending replicas, one place job per batch, and notes the need", async () => {
    const { db, endpoint } = await seed("reconcile-up", 3);
    // Spare capacity since two minutes ago (a scale-down noted it): this scale-up ends the spell.
    const now = new Date();
    await saveWarmPoolMemory(prismaRows(db), endpoint, {
      tracker: { histogram: emptyIdleTracker().histogram, idleSinceMs: now.getTime() - 120_000 },
    });
    const result = await reconcileEndpoint({ db, endpointId: endpoint.id, now });

    expect(result.created).toHaveLength(3);
    expect(result.counted).toBe(3);
    expect(result.toPlace).toEqual([result.created[0]]);
    const rows = await db.replica.findMany({
      where: { endpointId: endpoint.id },
      orderBy: { createdAt: "asc" },
    });
    expect(rows.map((r) => r.state)).toEqual(["pending", "pending", "pending"]);
    // What the inline placement of the first is told of it, as stored.
    expect(result.firstToPlace).toEqual({
      replicaId: rows[0]!.id,
      endpointId: endpoint.id,
      deploymentId: rows[0]!.deploymentId,
    });
    // Capacity was needed: the idle spell ends, and its two minutes are in the histogram.
    const memory = await loadWarmPoolMemory(prismaRows(db), endpoint.id);
    expect(memory.tracker.idleSinceMs).toBeNull();
    expect(memory.tracker.histogram).toEqual(recordIdleTime(emptyIdleTracker().histogram, 120));
    // Run again, nothing more to do: level-triggered.
    const again = await reconcileEndpoint({ db, endpointId: endpoint.id, now });
    expect(again.created).toEqual([]);
    expect(again.counted).toBe(3);
  });

  it("holds replacements back after replicas failed every attempt within the window", async () => {
    const { db, endpoint, replica } = await seed("reconcile-crash-loop", 2);
    for (let i = 0; i < CRASH_LOOP_FAILURES; i++) await replica("failed", Date.now() - 1_000 + i);
    const result = await reconcileEndpoint({ db, endpointId: endpoint.id });

    expect(result.created).toEqual([]);
    expect(result.backoff).toMatch(
      new RegExp(`^${CRASH_LOOP_FAILURES} replicas failed every start attempt .* holding back 2`),
    );
    expect(await db.replica.count({ where: { endpointId: endpoint.id, state: "pending" } })).toBe(
      0,
    );
  });

  it("drains what serves nobody first, then the newest ready, and cancels their starts", async () => {
    const { db, org, node, endpoint, deployment, replica } = await seed("reconcile-down", 1);
    const base = Date.now() - 60_000;
    const oldReady = await replica("ready", base);
    const newReady = await replica("ready", base + 1);
    const starting = await replica("starting", base + 2);
    await db.coldStart.create({
      data: {
        orgId: org.id,
        endpointId: endpoint.id,
        deploymentId: deployment.id,
        replicaId: starting.id,
        nodeId: node.id,
        path: "pull",
        locality: "cold",
        predictedSeconds: 60,
        status: "running",
      },
    });
    const now = new Date();
    const result = await reconcileEndpoint({ db, endpointId: endpoint.id, now });

    const byId = new Map(
      (await db.replica.findMany({ where: { endpointId: endpoint.id } })).map((r) => [r.id, r]),
    );
    expect(byId.get(oldReady.id)!.state).toBe("ready");
    expect(byId.get(starting.id)!.state).toBe("draining");
    expect(byId.get(starting.id)!.drainIntent).toBe("scale_down");
    expect(byId.get(starting.id)!.stateVersion).toBe(1);
    // The scaled-down ready replica is the warm pool's to park or stop.
    expect(byId.get(newReady.id)!.state).toBe("draining");
    expect(byId.get(newReady.id)!.drainIntent).toBe("park_candidate");
    expect(result.parking).toEqual([newReady.id]);
    expect(result.toStop).toEqual([
      { replicaId: starting.id, nodeId: node.id, action: "stop-on-node" },
    ]);
    const cancelled = await db.coldStart.findFirstOrThrow({ where: { replicaId: starting.id } });
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.finishedAt?.getTime()).toBe(now.getTime());
    expect(cancelled.error).toBeTruthy();
    // Capacity went spare: the warm pool's memory starts timing the idle spell.
    const memory = await loadWarmPoolMemory(prismaRows(db), endpoint.id);
    expect(memory.tracker.idleSinceMs).toBe(now.getTime());
  });

  it("drains a snapshot's source last, and never as a replica to park", async () => {
    const { db, org, node, endpoint, deployment, replica } = await seed("reconcile-capture", 1);
    const base = Date.now() - 60_000;
    const older = await replica("ready", base);
    const source = await replica("ready", base + 1);
    await db.snapshot.create({
      data: {
        orgId: org.id,
        deploymentId: deployment.id,
        gpuModel: "A10G",
        driverVersion: "570.133.20",
        cudaVersion: "12.8",
        location: "node",
        uri: "file:///var/lib/thaw/snapshots/capture",
        bytes: 3_400_000_000n,
        sourceNodeId: node.id,
        sourceReplicaId: source.id,
      },
    });

    // The newest ready replica would drain first; the capture's source is kept instead.
    const first = await reconcileEndpoint({ db, endpointId: endpoint.id, now: new Date() });
    expect(first.parking).toEqual([older.id]);
    expect((await db.replica.findUniqueOrThrow({ where: { id: source.id } })).state).toBe("ready");

    // Scaled to zero it drains too, as a stop: a park would meet the capture's own stop.
    await db.endpoint.update({ where: { id: endpoint.id }, data: { desiredReplicas: 0 } });
    const second = await reconcileEndpoint({ db, endpointId: endpoint.id, now: new Date() });
    expect(second.parking).toEqual([]);
    const drained = await db.replica.findUniqueOrThrow({ where: { id: source.id } });
    expect(drained.state).toBe("draining");
    expect(drained.drainIntent).toBe("scale_down");
    expect(second.toStop).toEqual([
      { replicaId: source.id, nodeId: node.id, action: "stop-on-node" },
    ]);
  });

  it("replaces a replica on a lost node and waits for the node before stopping it", async () => {
    const { db, node, endpoint, replica } = await seed("reconcile-lost", 1);
    const ready = await replica("ready", Date.now() - 60_000);
    await db.node.update({ where: { id: node.id }, data: { state: "lost" } });
    const result = await reconcileEndpoint({ db, endpointId: endpoint.id });

    const drained = await db.replica.findUniqueOrThrow({ where: { id: ready.id } });
    expect(drained.state).toBe("draining");
    expect(drained.drainIntent).toBe("node_lost");
    expect(result.created).toHaveLength(1);
    expect(result.toStop).toEqual([{ replicaId: ready.id, nodeId: node.id, action: "wait" }]);
  });

  it("hands back a start left scheduled past the dispatch deadline", async () => {
    const seeded = await seed("reconcile-lost-job", 1);
    const { db, endpoint } = seeded;
    const start = await lostStart(seeded);
    const result = await reconcileEndpoint({ db, endpointId: endpoint.id });

    expect(result.toDispatch).toEqual([start.id]);
    expect(result.created).toEqual([]);
  });

  it("does not hand back a lost start whose replica the same reconcile drains", async () => {
    // Scaled to zero: the placed replica is surplus, so its start is cancelled, not re-sent.
    const seeded = await seed("reconcile-lost-drained", 0);
    const { db, endpoint } = seeded;
    const start = await lostStart(seeded);
    const result = await reconcileEndpoint({ db, endpointId: endpoint.id });

    expect(result.toDispatch).toEqual([]);
    const cancelled = await db.coldStart.findUniqueOrThrow({ where: { id: start.id } });
    expect(cancelled.status).toBe("cancelled");
  });

  it("decides unlocked first when asked, and locks only to change something", async () => {
    const { db, endpoint, replica } = await seed("reconcile-unlocked-first", 1);
    await replica("ready", Date.now() - 60_000);
    // A row lock is written to the row: its xmax names the locking transaction.
    const lockedBy = async () =>
      (
        await db.$queryRaw<{ xmax: string }[]>`
          SELECT xmax::text FROM "Endpoint" WHERE id = ${endpoint.id}::uuid`
      )[0]!.xmax;
    const before = await lockedBy();

    const steady = await reconcileEndpoint({ db, endpointId: endpoint.id, unlockedFirst: true });
    expect(steady).toMatchObject({ desired: 1, counted: 1, created: [], toPlace: [] });
    expect(await lockedBy()).toBe(before);

    // The same without the pre-check locks the row, though it changes nothing either.
    await reconcileEndpoint({ db, endpointId: endpoint.id });
    const afterLocked = await lockedBy();
    expect(afterLocked).not.toBe(before);

    // Scaled up: the unlocked read finds a shortfall, and the locked reconcile creates it.
    await db.endpoint.update({ where: { id: endpoint.id }, data: { desiredReplicas: 2 } });
    const up = await reconcileEndpoint({ db, endpointId: endpoint.id, unlockedFirst: true });
    expect(up.created).toHaveLength(1);
    expect(up.counted).toBe(2);
    expect(await db.replica.count({ where: { endpointId: endpoint.id, state: "pending" } })).toBe(
      1,
    );

    // No such endpoint: nothing, either way.
    const missing = "00000000-0000-4000-8000-000000000000";
    expect(await reconcileEndpoint({ db, endpointId: missing, unlockedFirst: true })).toMatchObject(
      { desired: 0, created: [] },
    );
  });
});
