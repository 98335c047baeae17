import { DEMO_ENDPOINTS, demoDeploymentColumns } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import { finishReplicaStop } from "../placement/finish-replica-stop.ts";
import { placeReplica } from "../placement/place-replica.ts";
import { returnReplicaToPending } from "../placement/retry-replica.ts";
import { getEndpointGpuCost, getOrgGpuCost } from "./get-gpu-cost.ts";

// The GPU-time ledger and the cost report on a real database: replicas moved through their
// states by the real use cases (and the state updates the workers make), every interval's
// bounds read back from the rows, and the report's figures checked against them — each
// category, the path split, the price, and every total summing to the GPU-seconds recorded.

const GPUS_PER_REPLICA = 2;
const USD_PER_GPU_HOUR = 2; // a 4-GPU host at $8/h

describe("GPU time and cost", () => {
  let t: TestDatabase;
  let orgId: string;
  let endpointId: string;
  let deploymentId: string;
  let actor: Actor;

  const since = async (replicaId: string) =>
    (await t.db.replica.findUniqueOrThrow({ where: { id: replicaId } })).stateSince.getTime();
  const pause = () => new Promise((resolve) => setTimeout(resolve, 120));
  /** Moves a replica as a worker does, and returns when it entered the new state. */
  const move = async (replicaId: string, state: "starting" | "ready" | "warm" | "draining") => {
    await pause();
    await t.db.replica.update({ where: { id: replicaId }, data: { state } });
    return since(replicaId);
  };
  const newReplica = async () => {
    const replica = await t.db.replica.create({
      data: { orgId, endpointId, deploymentId, state: "pending" },
    });
    const placed = await placeReplica({ db: t.db, replicaId: replica.id, random: () => 0.5 });
    expect(placed.placed).toHaveLength(1);
    expect(await t.db.gpuReservation.count({ where: { replicaId: replica.id } })).toBe(
      GPUS_PER_REPLICA,
    );
    return { id: replica.id, placedAt: await since(replica.id) };
  };

  beforeAll(async () => {
    t = await createTestDatabase();
    const org = await t.db.org.create({ data: { slug: "cost", name: "Cost" } });
    orgId = org.id;
    actor = { type: "system", orgId };
    await t.db.node.create({
      data: {
        orgId,
        name: "priced-node",
        provider: "sim",
        runtime: "sim",
        instanceType: "g5.12xlarge",
        gpuModel: "A10G",
        gpuCount: 4,
        vcpus: 48,
        networkGbps: 40,
        diskReadMiBps: 1_000,
        diskWriteMiBps: 1_000,
        pcieGBps: 12,
        hourlyPriceUsd: 4 * USD_PER_GPU_HOUR,
        state: "ready",
        lastHeartbeatAt: new Date(),
        agentUrl: "http://127.0.0.1:9/agent",
      },
    });
    const endpoint = await t.db.endpoint.create({
      data: {
        orgId,
        slug: "cost-endpoint",
        name: "Cost",
        gpuType: "A10G",
        gpuCount: GPUS_PER_REPLICA,
        allowedPaths: ["pull"],
      },
    });
    endpointId = endpoint.id;
    const model = DEMO_ENDPOINTS.find((e) => e.gpuType === "A10G")!.deployment;
    const deployment = await t.db.deployment.create({
      data: { orgId, endpointId, version: 1, ...demoDeploymentColumns(model), status: "active" },
    });
    deploymentId = deployment.id;
    await t.db.endpoint.update({
      where: { id: endpointId },
      data: { activeDeploymentId: deploymentId },
    });
  });
  afterAll(async () => {
    await t.drop();
  });

  it("records every interval a replica held GPUs, by category, and reports them priced and summed", async () => {
    const windowStart = new Date(Date.now() - 1_000);
    // A: starts, serves, stops.
    const a = await newReplica();
    const aStarting = await move(a.id, "starting");
    const aReady = await move(a.id, "ready");
    const aDraining = await move(a.id, "draining");
    await pause();
    expect(await finishReplicaStop({ db: t.db, replicaId: a.id })).toBe(true);
    const aStopped = await since(a.id);
    // B: its start fails and it goes back to pending (its GPUs freed).
    const b = await newReplica();
    await pause();
    await t.db.$transaction((tx) =>
      returnReplicaToPending(tx, b.id, {
        pendingCause: "start_failed",
        path: "pull",
        phase: "pull",
      }),
    );
    const bRetried = await since(b.id);
    // (Given up, so the next placement's batch does not take it along: pending holds no GPU.)
    await t.db.replica.update({ where: { id: b.id }, data: { state: "stopped" } });
    // C: starts, serves, is parked warm — and is still warm when the report is read.
    const c = await newReplica();
    const cStarting = await move(c.id, "starting");
    const cReady = await move(c.id, "ready");
    const cWarm = await move(c.id, "warm");
    await pause();
    const now = new Date();

    const ledger = await t.db.gpuTime.findMany({ orderBy: { endedAt: "asc" } });
    expect(
      ledger.map((r) => [
        r.replicaId === a.id ? "a" : r.replicaId === b.id ? "b" : "c",
        r.category,
      ]),
    ).toEqual([
      ["a", "starting"],
      ["a", "starting"],
      ["a", "serving"],
      ["a", "stopping"],
      ["b", "failed"],
      ["c", "starting"],
      ["c", "starting"],
      ["c", "serving"],
    ]);
    for (const row of ledger) {
      expect(row.gpus).toBe(GPUS_PER_REPLICA);
      expect(row.usdPerGpuHour).toBe(USD_PER_GPU_HOUR);
      if (row.category === "starting" || row.category === "failed") expect(row.path).toBe("pull");
    }

    const gpuSec = (fromMs: number, toMs: number) => (GPUS_PER_REPLICA * (toMs - fromMs)) / 1000;
    const expected = {
      starting: gpuSec(a.placedAt, aReady) + gpuSec(c.placedAt, cReady),
      serving: gpuSec(aReady, aDraining) + gpuSec(cReady, cWarm),
      stopping: gpuSec(aDraining, aStopped),
      failed: gpuSec(b.placedAt, bRetried),
      warm_idle: gpuSec(cWarm, now.getTime()),
    };
    expect(aStarting).toBeGreaterThan(a.placedAt);
    expect(cStarting).toBeGreaterThan(c.placedAt);

    const report = await getEndpointGpuCost({
      actor,
      endpoint: "cost-endpoint",
      input: { from: windowStart.toISOString(), to: now.toISOString() },
      db: t.db,
      now,
    });
    for (const category of ["starting", "serving", "stopping", "failed", "warm_idle"] as const) {
      expect(report.gpuSeconds[category], category).toBeCloseTo(expected[category], 3);
      expect(report.usd[category], category).toBeCloseTo(
        (expected[category] * USD_PER_GPU_HOUR) / 3600,
        9,
      );
    }
    const sum = Object.values(expected).reduce((s, v) => s + v, 0);
    expect(report.gpuSeconds.total).toBeCloseTo(sum, 3);
    expect(report.unpricedGpuSeconds).toBe(0);
    expect(report.startsByPath.map((p) => p.path)).toEqual(["pull"]);
    expect(report.startsByPath[0]!.startingGpuSeconds).toBeCloseTo(expected.starting, 3);
    expect(report.startsByPath[0]!.failedGpuSeconds).toBeCloseTo(expected.failed, 3);
    // The series covers the window bucket by bucket and adds up to the totals.
    const seriesTotal = report.series.reduce(
      (s, b) => s + b.serving + b.starting + b.warm_idle + b.failed + b.stopping,
      0,
    );
    expect(seriesTotal).toBeCloseTo(report.gpuSeconds.total, 3);

    // The org's report is the same time, with the endpoint's share.
    const org = await getOrgGpuCost({
      actor,
      input: { from: windowStart.toISOString(), to: now.toISOString() },
      db: t.db,
      now,
    });
    expect(org.gpuSeconds.total).toBeCloseTo(report.gpuSeconds.total, 6);
    expect(org.endpoints?.map((e) => [e.endpointId, e.slug])).toEqual([
      [endpointId, "cost-endpoint"],
    ]);
    expect(org.endpoints![0]!.gpuSeconds).toBeCloseTo(report.gpuSeconds.total, 6);
    expect(org.endpoints![0]!.usd).toBeCloseTo(report.usd.total, 9);
  });

  it("clips intervals to the window, and refuses a window it cannot answer with the field named", async () => {
    const all = await getEndpointGpuCost({ actor, endpoint: endpointId, db: t.db });
    const ledger = await t.db.gpuTime.findFirstOrThrow({
      where: { category: "serving" },
      orderBy: { startedAt: "asc" },
    });
    // A window covering only the first half of one serving interval counts only that half.
    const mid = new Date((ledger.startedAt.getTime() + ledger.endedAt.getTime()) / 2);
    const half = await getEndpointGpuCost({
      actor,
      endpoint: endpointId,
      input: { from: ledger.startedAt.toISOString(), to: mid.toISOString() },
      db: t.db,
    });
    expect(half.gpuSeconds.serving).toBeCloseTo(
      (GPUS_PER_REPLICA * (mid.getTime() - ledger.startedAt.getTime())) / 1000,
      3,
    );
    expect(all.gpuSeconds.total).toBeGreaterThan(half.gpuSeconds.total);
    await expect(
      getEndpointGpuCost({
        actor,
        endpoint: endpointId,
        input: { from: "2026-11-27T10:00:00Z", to: "2026-11-27T09:00:00Z" },
        db: t.db,
      }),
    ).rejects.toMatchObject({ code: "UNPROCESSABLE", details: { field: "query.from" } });
    await expect(
      getEndpointGpuCost({
        actor,
        endpoint: endpointId,
        input: { from: "2026-01-01T00:00:00Z", to: "2026-11-27T00:00:00Z" },
        db: t.db,
      }),
    ).rejects.toMatchObject({ code: "UNPROCESSABLE" });
    await expect(
      getEndpointGpuCost({ actor, endpoint: endpointId, input: { from: "yesterday" }, db: t.db }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    // Year 0 exists in ISO 8601 but not in PostgreSQL: refused before any query.
    await expect(
      getEndpointGpuCost({
        actor,
        endpoint: endpointId,
        input: { from: "0000-01-01T00:00:00Z", to: "0000-01-02T00:00:00Z" },
        db: t.db,
      }),
    ).rejects.toMatchObject({ code: "UNPROCESSABLE", details: { field: "query.from" } });
    // Another org's endpoint is not found.
    await expect(
      getEndpointGpuCost({
        actor: { type: "system", orgId: "00000000-0000-7000-8000-000000000000" },
        endpoint: endpointId,
        db: t.db,
      }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
