import { DEMO_ENDPOINTS, demoDeploymentColumns } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emptyIdleTimeHistogram, HISTOGRAM_BIN_SECONDS } from "../scheduling/index.ts";
import { testNodeRow } from "../testing/index.ts";
import { BestNonWarmMemo } from "./best-non-warm-memo.ts";
import { TimedReads } from "./timed-reads.ts";
import { tendWarmPool } from "./tend-warm-pool.ts";

// A tending that changes nothing ends after one read, without the endpoint's lock or any
// write; one that changes something is decided and done under the lock, as before.

const NOW = new Date("2026-11-28T12:00:00Z");
const BEST_NON_WARM_SECONDS = 120;

describe("a tending that changes nothing", () => {
  let t: TestDatabase;
  let orgId: string;
  let nodeId: string;
  let endpointId: string;
  let deploymentId: string;
  let replicaId: string;

  beforeAll(async () => {
    t = await createTestDatabase();
    orgId = (await t.db.org.create({ data: { slug: "unchanged", name: "Unchanged" } })).id;
    nodeId = (
      await t.db.node.create({
        data: testNodeRow(orgId, { name: "parking", lastHeartbeatAt: NOW }),
      })
    ).id;
    const model = DEMO_ENDPOINTS.find((e) => e.gpuType === "A10G")!.deployment;
    endpointId = (
      await t.db.endpoint.create({
        data: {
          orgId,
          slug: "parked",
          name: "Parked",
          gpuType: "A10G",
          maxReplicas: 2,
          gpuSecondsPerWaitSecond: 100_000,
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
    replicaId = (
      await t.db.replica.create({
        data: { orgId, endpointId, deploymentId, nodeId, state: "warm" },
      })
    ).id;
    await t.db.gpuReservation.create({ data: { nodeId, gpuIndex: 0, replicaId } });
    // Requests have always come back two to three minutes after the endpoint went idle.
    const histogram = emptyIdleTimeHistogram();
    histogram.bins[Math.floor(150 / HISTOGRAM_BIN_SECONDS)] = 40;
    await t.db.endpointWarmPool.create({
      data: {
        endpointId,
        orgId,
        histogram: { bins: histogram.bins, outOfBounds: histogram.outOfBounds },
        idleSince: new Date(NOW.getTime() - 30_000),
        bestNonWarmSeconds: BEST_NON_WARM_SECONDS,
      },
    });
  });
  afterAll(async () => {
    await t.drop();
  });

  const memory = () => t.db.endpointWarmPool.findUniqueOrThrow({ where: { endpointId } });
  const tend = (now: Date, orgPooledGpus?: TimedReads<number>) => {
    const memo = new BestNonWarmMemo(60_000, () => now.getTime());
    memo.remember(endpointId, { deploymentId, seconds: BEST_NON_WARM_SECONDS });
    return tendWarmPool({
      db: t.db,
      endpointId,
      options: { gpuBudget: 4, bestNonWarm: memo, ...(orgPooledGpus ? { orgPooledGpus } : {}) },
      now,
    });
  };
  /** A scheduler's shared count of the org's pooled GPUs, already read as `held`. */
  const orgCountOf = (held: number) => {
    const counts = new TimedReads<number>(15_000, () => NOW.getTime());
    void counts.get(orgId, () => Promise.resolve(held));
    return counts;
  };

  it("takes what the org's other pools hold from the shared count, less its own", async () => {
    // The org's count is this endpoint's one parked GPU: nothing held elsewhere, nothing to do.
    const before = await memory();
    const result = await tend(NOW, orgCountOf(1));
    expect(result.plan?.warmReplicas).toBe(1);
    expect((await memory()).updatedAt).toEqual(before.updatedAt);
  });

  it("decides again under the lock, on an exact count, when the shared count says the budget is spent", async () => {
    // A count from earlier in the sweep: other pools held the whole budget then. The read
    // without the lock sees a change; the locked tending counts again and keeps the replica.
    const before = await memory();
    const result = await tend(NOW, orgCountOf(4 + 1));
    expect(result.plan?.warmReplicas).toBe(1);
    expect(result.toStop).toEqual([]);
    expect((await memory()).updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
    const replica = await t.db.replica.findUniqueOrThrow({ where: { id: replicaId } });
    expect(replica.state).toBe("warm");
  });

  it("keeps a parked replica inside its keep-alive, and writes nothing", async () => {
    const before = await memory();
    const result = await tend(NOW);
    expect(result.plan?.warmReplicas).toBe(1);
    expect(result).toMatchObject({ toPark: [], toSleep: [], toStop: [], toPlace: [] });
    // The locked tending writes the endpoint's memory every time: this one did not.
    expect((await memory()).updatedAt).toEqual(before.updatedAt);
    const replica = await t.db.replica.findUniqueOrThrow({ where: { id: replicaId } });
    expect(replica.state).toBe("warm");
  });

  it("lets the replica go under the lock once the keep-alive is over", async () => {
    const muchLater = new Date(NOW.getTime() + 30 * 86_400_000);
    const before = await memory();
    const result = await tend(muchLater);
    expect(result.toStop).toEqual([{ replicaId, nodeId }]);
    const replica = await t.db.replica.findUniqueOrThrow({ where: { id: replicaId } });
    expect(replica).toMatchObject({ state: "draining", drainIntent: "keep_alive_over" });
    expect((await memory()).updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
  });
});
