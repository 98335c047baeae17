import { DEMO_ENDPOINTS, demoDeploymentColumns } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { testNodeRow } from "../testing/index.ts";
import { lockNodesSql } from "./lock-nodes.ts";
import { placeReplica } from "./place-replica.ts";

// A warm handover's write, from Postgres: the idle replica's GPUs become the new replica's in
// the batch's one write statement, and only while the idle replica is still warm and its
// node still ready. Both are checked after the node's lock: a drain or the warm pool that
// changes them while the placement waits for that lock wins, and the replica is placed again
// instead of being handed GPUs that are no longer there to give.

describe("a warm handover", () => {
  let t: TestDatabase;
  let orgId: string;
  let nodeId: string;
  let endpointId: string;
  let deploymentId: string;
  let idleId: string;
  let pendingId: string;

  beforeAll(async () => {
    t = await createTestDatabase();
    orgId = (await t.db.org.create({ data: { slug: "handover", name: "Handover" } })).id;
    // Two GPUs: one for the idle replica, one free, so a cold start is an option too.
    nodeId = (
      await t.db.node.create({
        data: testNodeRow(orgId, { name: "handover-node", gpuCount: 2, hourlyPriceUsd: 2 }),
      })
    ).id;
    const model = DEMO_ENDPOINTS.find((e) => e.gpuType === "A10G")!.deployment;
    endpointId = (
      await t.db.endpoint.create({
        data: {
          orgId,
          slug: "handed",
          name: "Handed",
          gpuType: "A10G",
          maxReplicas: 4,
          allowedPaths: ["warm", "pull"],
        },
      })
    ).id;
    deploymentId = (
      await t.db.deployment.create({
        data: { orgId, endpointId, version: 1, ...demoDeploymentColumns(model), status: "active" },
      })
    ).id;
    await t.db.endpoint.update({
      where: { id: endpointId },
      data: { activeDeploymentId: deploymentId },
    });
  });
  afterAll(async () => {
    await t.drop();
  });

  beforeEach(async () => {
    await t.db.coldStart.deleteMany({});
    await t.db.gpuReservation.deleteMany({});
    await t.db.gpuTime.deleteMany({});
    await t.db.replica.deleteMany({});
    await t.db.node.update({ where: { id: nodeId }, data: { state: "ready" } });
    // The idle replica parked on GPU 1 since a minute ago; GPU 0 is free for a cold start.
    idleId = (
      await t.db.replica.create({
        data: {
          orgId,
          endpointId,
          deploymentId,
          nodeId,
          state: "warm",
          stateSince: new Date(Date.now() - 60_000),
        },
      })
    ).id;
    await t.db.gpuReservation.create({ data: { nodeId, gpuIndex: 1, replicaId: idleId } });
    pendingId = (
      await t.db.replica.create({ data: { orgId, endpointId, deploymentId, state: "pending" } })
    ).id;
  });

  /** The lock holder's transaction: what it changes is seen once it lets the lock go. */
  type Changer = Pick<TestDatabase["db"], "replica" | "node">;
  const place = () => placeReplica({ db: t.db, replicaId: pendingId, random: () => 0.5 });

  it("moves the idle replica's GPUs to the new one, retires it and records its idle GPU time", async () => {
    const result = await place();
    expect(result).toMatchObject({ kind: "placed", path: "warm", nodeId });
    const [idle, placed] = await Promise.all([
      t.db.replica.findUniqueOrThrow({ where: { id: idleId } }),
      t.db.replica.findUniqueOrThrow({ where: { id: pendingId } }),
    ]);
    expect(idle.state).toBe("stopped");
    expect(placed).toMatchObject({ state: "placed", nodeId });
    expect(
      await t.db.gpuReservation.findMany({ select: { gpuIndex: true, replicaId: true } }),
    ).toEqual([{ gpuIndex: 1, replicaId: pendingId }]);
    const start = await t.db.coldStart.findFirstOrThrow({ where: { replicaId: pendingId } });
    expect(start).toMatchObject({ path: "warm", locality: "warm-replica", nodeId });
    // The ledger's trigger saw the GPU still the idle replica's when it left `warm`.
    const idleTime = await t.db.gpuTime.findFirstOrThrow({ where: { replicaId: idleId } });
    expect(idleTime).toMatchObject({ category: "warm_idle", gpus: 1 });
    expect(idleTime.endedAt.getTime() - idleTime.startedAt.getTime()).toBeGreaterThan(59_000);
  });

  it.each([
    [
      "the warm pool stops the idle replica",
      (tx: Changer) => tx.replica.update({ where: { id: idleId }, data: { state: "stopped" } }),
    ],
    [
      "the node is retired",
      (tx: Changer) => tx.node.update({ where: { id: nodeId }, data: { state: "draining" } }),
    ],
  ])(
    "hands nothing over when %s while the placement waits for the node's lock",
    async (_, change) => {
      let placing: ReturnType<typeof place> | undefined;
      await t.db.$transaction(
        async (tx) => {
          await tx.$queryRaw(lockNodesSql([nodeId]));
          placing = place();
          // The placement has read the fleet and chosen the handover: it waits for this lock.
          await expect
            .poll(
              async () => {
                const [row] = await t.db.$queryRaw<{ waiting: number }[]>`
                SELECT count(*)::int AS waiting FROM pg_locks l JOIN pg_database d ON d.oid = l.database
                WHERE d.datname = current_database() AND l.locktype = 'advisory' AND NOT l.granted`;
                return row!.waiting;
              },
              { timeout: 10_000 },
            )
            .toBe(1);
          await change(tx);
        },
        { timeout: 20_000 },
      );
      const result = await placing!;
      expect(result).toMatchObject({ kind: "skipped", placed: [], followUps: [pendingId] });
      const placed = await t.db.replica.findUniqueOrThrow({ where: { id: pendingId } });
      expect(placed.state).toBe("pending");
      expect(await t.db.coldStart.count()).toBe(0);
      expect(
        await t.db.gpuReservation.findMany({ select: { gpuIndex: true, replicaId: true } }),
      ).toEqual([{ gpuIndex: 1, replicaId: idleId }]);
    },
  );
});
